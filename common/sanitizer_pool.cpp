/// @file sanitizer_pool.cpp
/// @brief `SanitizerPool` through the NVTX memory API (header-only NVTX 3).
#include "sanitizer_pool.hpp"

#include <nvtx3/nvToolsExtMem.h>

namespace staged {

namespace {
nvtxDomainHandle_t Domain() {
  static const nvtxDomainHandle_t domain = nvtxDomainCreateA("staged-kernels");
  return domain;
}
}  // namespace

SanitizerPool::SanitizerPool(const void* base, std::size_t bytes, const char* name) {
  nvtxMemVirtualRangeDesc_t range = {};
  range.size = bytes;
  range.ptr = base;
  nvtxMemHeapDesc_t desc = {};
  desc.extCompatID = NVTX_EXT_COMPATID_MEM;
  desc.structSize = sizeof(desc);
  desc.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
  desc.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  desc.typeSpecificDescSize = sizeof(range);
  desc.typeSpecificDesc = &range;
  desc.messageType = NVTX_MESSAGE_TYPE_ASCII;
  desc.message.ascii = name;
  heap_ = nvtxMemHeapRegister(Domain(), &desc);
}

SanitizerPool::~SanitizerPool() {
  if (heap_ != nullptr) nvtxMemHeapUnregister(Domain(), static_cast<nvtxMemHeapHandle_t>(heap_));
}

void SanitizerPool::Region(const void* p, std::size_t bytes) {
  if (heap_ == nullptr) return;  // no tool: nothing registered
  nvtxMemVirtualRangeDesc_t range = {};
  range.size = bytes;
  range.ptr = p;
  nvtxMemRegionsRegisterBatch_t batch = {};
  batch.extCompatID = NVTX_EXT_COMPATID_MEM;
  batch.structSize = sizeof(batch);
  batch.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  batch.heap = static_cast<nvtxMemHeapHandle_t>(heap_);
  batch.regionCount = 1;
  batch.regionDescElementSize = sizeof(range);
  batch.regionDescElements = &range;
  nvtxMemRegionsRegister(Domain(), &batch);
}

}  // namespace staged
