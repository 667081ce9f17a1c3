#include "viewer.hpp"

namespace leadflow {

Viewer viewer_of(IngestContext&, const ApiKey& key) { return Viewer::of(key); }

}  // namespace leadflow
