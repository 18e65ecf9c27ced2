/// @file nccl_check.hpp
/// @brief Throws on an NCCL error, naming the call.
#pragma once

namespace ch06 {
/// Throws `std::runtime_error` with NCCL's message unless @p result is `ncclSuccess`.
/// @param[in] result an `ncclResult_t`, as int
/// @param[in] what the call
void CheckNccl(int result, const char* what);
}  // namespace ch06
