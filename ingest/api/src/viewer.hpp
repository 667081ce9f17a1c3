#pragma once
// Private: who is reading, for the visibility model (leadflow/visibility/visibility.hpp).
#include "leadflow/api/api.hpp"
#include "leadflow/domain/accounts.hpp"
#include "leadflow/visibility/visibility.hpp"

namespace leadflow {

/// The reader behind an authorised key (an API key, or a dashboard session acting as one).
Viewer viewer_of(IngestContext& ctx, const ApiKey& key);

}  // namespace leadflow
