/**
 * @file sanitizer_pool.hpp
 * @brief `SanitizerPool`: tells compute-sanitizer which pieces of one device allocation are in
 *        use, so that memcheck reports an access that strays from one piece into the next as it
 *        would across separate allocations.
 *
 * Registered through the NVTX memory API (a pool and its regions). Outside a tool the calls do
 * nothing; under `compute-sanitizer --nvtx yes --tool memcheck` an access to the pool outside
 * every registered region is an error.
 *
 * @code
 * staged::DeviceBuffer<std::uint32_t> words(a + b);
 * staged::SanitizerPool pool(words.data(), words.size() * 4, "counts");
 * pool.Region(words.data(), a * 4);
 * pool.Region(words.data() + a, b * 4);
 * @endcode
 */
#pragma once

#include <cstddef>

namespace staged {

/// One device allocation registered as an NVTX memory pool, and the regions of it in use.
class SanitizerPool {
 public:
  /// Registers [@p base, @p base + @p bytes) as a pool named @p name.
  /// @param[in] base the allocation
  /// @param[in] bytes its size
  /// @param[in] name shown in the tool's reports
  SanitizerPool(const void* base, std::size_t bytes, const char* name);
  /// Unregisters the pool (and its regions).
  ~SanitizerPool();
  SanitizerPool(const SanitizerPool&) = delete;
  SanitizerPool& operator=(const SanitizerPool&) = delete;
  /// Marks [@p p, @p p + @p bytes), inside the pool, as in use.
  /// @param[in] p first byte
  /// @param[in] bytes size, > 0
  void Region(const void* p, std::size_t bytes);

 private:
  void* heap_ = nullptr;  // nvtxMemHeapHandle_t
};

}  // namespace staged
