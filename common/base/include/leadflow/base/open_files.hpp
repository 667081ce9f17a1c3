#pragma once

namespace leadflow {

/// Raises this process's soft limit on open descriptors to its hard limit, as servers do: the
/// front holds up to 10,000 client connections and a worker thousands of buyer connections, far
/// past the usual soft limit of 1,024. Returns the soft limit now in force (0 if unknown).
unsigned long raise_open_file_limit();

/// The soft limit on open descriptors in force now (0 if unknown).
unsigned long open_file_limit();

}  // namespace leadflow
