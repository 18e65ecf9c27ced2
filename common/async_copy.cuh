/**
 * @file async_copy.cuh
 * @brief Copies from global to shared memory that need no register: `cp.async` on sm_80 and
 *        newer, and, compiled for an older GPU (sm_75), the same copies done synchronously
 *        through a register, so every caller runs everywhere.
 *
 * A thread issues copies, closes them into a *group* (`CommitCopies`), and later waits until all
 * but its newest few groups have landed (`WaitCopies<kPending>`); other threads see the data only
 * after a barrier that follows the wait. Without `cp.async` a copy has landed when the call
 * returns, so committing and waiting do nothing and the callers' barriers keep their meaning.
 */
#pragma once

#include <cuda_runtime.h>

namespace staged {

/// Whether the device code being compiled has `cp.async` (sm_80 and newer). In the host pass
/// it is true: it only chooses between device code paths.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
inline constexpr bool kAsyncCopy = false;
#else
inline constexpr bool kAsyncCopy = true;
#endif

/**
 * @brief Copies @p kBytes (4 or 16) from global @p src to shared @p dst: asynchronously (16
 *        bytes cached in L2 only, `.cg`; 4 bytes through L1, `.ca`, the only mode for 4), or
 *        synchronously where `cp.async` does not exist.
 * @tparam kBytes 4 or 16
 * @param[out] dst shared destination, aligned to kBytes
 * @param[in] src global source, aligned to kBytes
 */
// snippet-begin: async-copy
template <int kBytes>
__device__ __forceinline__ void CopyToShared(void* dst, const void* src) {
  static_assert(kBytes == 4 || kBytes == 16, "cp.async copies 4, 8 or 16 bytes; we use 4 and 16");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const auto shared = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  if constexpr (kBytes == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(shared), "l"(src) : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(shared), "l"(src) : "memory");
  }
#else
  // No cp.async: a load into a register, then a shared store.
  if constexpr (kBytes == 16) {
    *static_cast<uint4*>(dst) = __ldcg(static_cast<const uint4*>(src));
  } else {
    *static_cast<unsigned*>(dst) = *static_cast<const unsigned*>(src);
  }
#endif
}
// snippet-end: async-copy

/**
 * @brief `CopyToShared`, except that when @p in is false nothing is read and @p kBytes zeros are
 *        written (the copy's source size is 0): tiles that overhang a matrix fill with zeros.
 * @tparam kBytes 4 or 16
 * @param[out] dst shared destination, aligned to kBytes
 * @param[in] src global source, aligned to kBytes (not read when @p in is false)
 * @param[in] in whether to read @p src
 */
// snippet-begin: async-copy-or-zero
template <int kBytes>
__device__ __forceinline__ void CopyToSharedOrZero(void* dst, const void* src, bool in) {
  static_assert(kBytes == 4 || kBytes == 16, "cp.async copies 4, 8 or 16 bytes; we use 4 and 16");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const auto shared = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  const int src_bytes = in ? kBytes : 0;  // 0: zero-fill, read nothing
  if constexpr (kBytes == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(shared), "l"(src),
                 "r"(src_bytes));
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(shared), "l"(src),
                 "r"(src_bytes));
  }
#else
  if constexpr (kBytes == 16) {
    *static_cast<uint4*>(dst) =
        in ? __ldcg(static_cast<const uint4*>(src)) : make_uint4(0, 0, 0, 0);
  } else {
    *static_cast<unsigned*>(dst) = in ? *static_cast<const unsigned*>(src) : 0u;
  }
#endif
}
// snippet-end: async-copy-or-zero

/// Closes this thread's copies issued since the last call into one group.
__device__ __forceinline__ void CommitCopies() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;");
#endif
}

/// Waits until at most @p kPending of this thread's newest groups are still in flight. The
/// barrier the caller puts after it (`__syncthreads`) orders the shared reads that follow.
/// @tparam kPending groups that may still be in flight (0: all have landed)
template <int kPending>
__device__ __forceinline__ void WaitCopies() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;" ::"n"(kPending));
#endif
}

/// Waits until every copy this thread issued has landed, committed or not.
__device__ __forceinline__ void WaitAllCopies() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

}  // namespace staged
