// The custom allocator registry from C, in the shape of CANN's allocator sample: an allocator object with its
// own functions over aclrtMalloc, registered on a stream, fetched back and called through the pointers the
// runtime returns. Prints "name code" lines and "values ok|WRONG" for the data checked.
#include <cstdio>
#include <cstring>

#include "acl/acl.h"
#include "acl/acl_rt_allocator.h"

struct Pool {
    int allocs = 0;
    int frees = 0;
};

static void *Alloc(aclrtAllocator allocator, size_t size)
{
    void *ptr = nullptr;
    if (aclrtMalloc(&ptr, size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
        return nullptr;
    }
    static_cast<Pool *>(allocator)->allocs++;
    return ptr;  // the block is the device address itself
}

static void Free(aclrtAllocator allocator, aclrtAllocatorBlock block)
{
    aclrtFree(block);
    static_cast<Pool *>(allocator)->frees++;
}

static void *AddrOf(aclrtAllocatorBlock block)
{
    return block;
}

static void Report(const char *name, aclError code)
{
    const char *message = code == ACL_SUCCESS ? nullptr : aclGetRecentErrMsg();
    std::printf("%s %d%s%s\n", name, code, message ? " " : "", message ? message : "");
}

int main()
{
    Report("init", aclInit(nullptr));
    Report("set", aclrtSetDevice(0));
    aclrtStream stream = nullptr;
    Report("stream", aclrtCreateStream(&stream));
    Pool pool;
    aclrtAllocatorDesc desc = aclrtAllocatorCreateDesc();
    std::printf("desc %d\n", desc != nullptr);
    Report("set-obj", aclrtAllocatorSetObjToDesc(desc, &pool));
    Report("set-alloc", aclrtAllocatorSetAllocFuncToDesc(desc, Alloc));
    Report("set-free", aclrtAllocatorSetFreeFuncToDesc(desc, Free));
    Report("register-incomplete", aclrtAllocatorRegister(stream, desc));
    Report("set-addr", aclrtAllocatorSetGetAddrFromBlockFuncToDesc(desc, AddrOf));
    Report("register-default", aclrtAllocatorRegister(nullptr, desc));
    Report("register", aclrtAllocatorRegister(stream, desc));

    aclrtAllocatorDesc gotDesc = nullptr;
    aclrtAllocator gotObj = nullptr;
    aclrtAllocatorAllocFunc allocFn = nullptr;
    aclrtAllocatorFreeFunc freeFn = nullptr;
    aclrtAllocatorAllocAdviseFunc adviseFn = reinterpret_cast<aclrtAllocatorAllocAdviseFunc>(1);  // overwritten
    aclrtAllocatorGetAddrFromBlockFunc addrFn = nullptr;
    Report("get", aclrtAllocatorGetByStream(stream, &gotDesc, &gotObj, &allocFn, &freeFn, &adviseFn, &addrFn));
    std::printf("same %d\n", gotDesc == desc && gotObj == &pool && allocFn == Alloc && freeFn == Free &&
                                 adviseFn == nullptr && addrFn == AddrOf);
    aclrtAllocatorBlock block = allocFn(gotObj, 64);
    void *dev = addrFn(block);
    Report("memset", aclrtMemsetAsync(dev, 64, 0x3C, 64, stream));
    Report("sync", aclrtSynchronizeStream(stream));
    unsigned char back[64];
    Report("copy", aclrtMemcpy(back, 64, dev, 64, ACL_MEMCPY_DEVICE_TO_HOST));
    bool ok = true;
    for (unsigned char b : back) {
        ok = ok && b == 0x3C;
    }
    std::printf("values %s\n", ok ? "ok" : "WRONG");
    freeFn(gotObj, block);
    std::printf("counts %d\n", pool.allocs == 1 && pool.frees == 1);
    Report("unregister", aclrtAllocatorUnregister(stream));
    Report("get-after", aclrtAllocatorGetByStream(stream, &gotDesc, nullptr, nullptr, nullptr, nullptr, nullptr));
    Report("destroy-desc", aclrtAllocatorDestroyDesc(desc));
    Report("destroy-again", aclrtAllocatorDestroyDesc(desc));
    Report("destroy-stream", aclrtDestroyStream(stream));
    Report("reset", aclrtResetDevice(0));
    Report("finalize", aclFinalize());
    return 0;
}
