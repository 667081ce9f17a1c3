#pragma once
// CRC32C (Castagnoli), the checksum of every embedded-queue record.
#include <cstddef>
#include <cstdint>

namespace leadflow::embedded {

/// The CRC32C (reflected polynomial 0x82F63B78) of `n` bytes at `data`: table-driven,
/// slicing-by-8, so checking a record costs about a byte per cycle. Pure; thread-safe.
std::uint32_t crc32c(const char* data, std::size_t n);

}  // namespace leadflow::embedded
