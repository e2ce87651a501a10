// Memory shared between processes, from C, in the shape of CANN's memory/7 (physical memory through a shareable
// handle with a pid whitelist) and memory/10 (IPC memory by key with a pid whitelist) samples; the exporter also
// does host_register/0's zero copy and managed_memory/0's allocation with copies instead of kernels.
// B writes its pid (aclrtDeviceGetBareTgid) to <base>.pid; A lists it and writes the shareable handle and the IPC
// key; B maps and imports them, checks A's data, writes its own and says it is done; A checks B's data.
// Usage: memory_sharing export <base> | memory_sharing import <base>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "acl/acl.h"

static void Report(const char *name, aclError code)
{
    const char *message = code == ACL_SUCCESS ? nullptr : aclGetRecentErrMsg();
    std::printf("%s %d%s%s\n", name, code, message ? " " : "", message ? message : "");
}

static void Check(const char *name, bool ok)
{
    std::printf("check-%s %d\n", name, ok ? 0 : 1);
}

static void WriteFile(const std::string &path, const std::string &text)
{
    std::ofstream(path + ".part") << text;
    std::rename((path + ".part").c_str(), path.c_str());
}

static std::string WaitAndRead(const std::string &path)
{
    for (int i = 0; i < 600 && !std::ifstream(path).good(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::string text;
    std::ifstream(path) >> text;
    return text;
}

static aclrtPhysicalMemProp DeviceProp()
{
    aclrtPhysicalMemProp prop = {};
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    return prop;
}

static void ZeroCopyAndManaged()
{
    const size_t n = 256, bytes = n * sizeof(float);
    float data[n];
    for (size_t i = 0; i < n; ++i) data[i] = 0.5f * static_cast<float>(i);
    void *dev = nullptr, *host = nullptr, *mapped = nullptr;
    Report("zc-malloc", aclrtMalloc(&dev, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    Report("zc-h2d", aclrtMemcpy(dev, bytes, data, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    Report("zc-host", aclrtMallocHost(&host, bytes));
    Report("zc-register-bad-flag", aclrtHostRegisterV2(host, bytes, 0));
    Report("zc-register", aclrtHostRegisterV2(host, bytes, ACL_HOST_REG_MAPPED));
    Report("zc-register-again", aclrtHostRegisterV2(host, bytes, ACL_HOST_REG_MAPPED));
    Report("zc-device-pointer", aclrtHostGetDevicePointer(host, &mapped, 0));
    Report("zc-d2d", aclrtMemcpy(mapped, bytes, dev, bytes, ACL_MEMCPY_DEVICE_TO_DEVICE));
    Check("zero-copy", std::memcmp(host, data, bytes) == 0);  // the host buffer holds it, no copy back
    Report("zc-unregister", aclrtHostUnregister(host));
    Report("zc-unregister-again", aclrtHostUnregister(host));
    Report("zc-free-host", aclrtFreeHost(host));

    float *managed = nullptr;
    Report("managed-bad-flag", aclrtMemAllocManaged(reinterpret_cast<void **>(&managed), bytes, 0));
    Report("managed", aclrtMemAllocManaged(reinterpret_cast<void **>(&managed), bytes, ACL_RT_MEM_ATTACH_GLOBAL));
    for (size_t i = 0; i < n; ++i) managed[i] = data[i] + 1.0f;  // host code writes it in place
    Report("managed-d2d", aclrtMemcpy(dev, bytes, managed, bytes, ACL_MEMCPY_DEVICE_TO_DEVICE));
    float back[n];
    Report("managed-d2h", aclrtMemcpy(back, bytes, dev, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    Check("managed-device-read", back[n - 1] == data[n - 1] + 1.0f && back[0] == 1.0f);
    Report("managed-memset", aclrtMemset(managed, bytes, 0, 16));
    Check("managed-host-read", managed[0] == 0.0f && managed[3] == 0.0f && managed[4] == data[4] + 1.0f);
    Report("managed-free", aclrtFree(managed));
    Report("zc-free", aclrtFree(dev));
}

static int Export(const std::string &base)
{
    aclrtPhysicalMemProp prop = DeviceProp();
    size_t granularity = 0;
    Report("granularity", aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &granularity));
    aclrtDrvMemHandle handles[2] = {nullptr, nullptr};
    Report("physical-0", aclrtMallocPhysical(&handles[0], granularity, &prop, 0));
    Report("physical-1", aclrtMallocPhysical(&handles[1], granularity, &prop, 0));
    Report("physical-bad-flags", aclrtMallocPhysical(&handles[1], granularity, &prop, 1));
    char *va = nullptr;
    Report("reserve", aclrtReserveMemAddress(reinterpret_cast<void **>(&va), 2 * granularity, 0, nullptr, 0));
    Report("map-0", aclrtMapMem(va, granularity, 0, handles[0], 0));
    Report("map-1", aclrtMapMem(va + granularity, granularity, 0, handles[1], 0));
    aclrtMemAccessDesc access = {};
    access.flags = ACL_RT_MEM_ACCESS_FLAGS_READWRITE;
    access.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = 0;
    Report("access", aclrtMemSetAccess(va, 2 * granularity, &access, 1));
    float seam[16], back[16];
    for (int i = 0; i < 16; ++i) seam[i] = 100.0f + static_cast<float>(i);
    char *start = va + granularity - 8 * sizeof(float);  // 8 floats in each block
    Report("seam-h2d", aclrtMemcpy(start, sizeof(seam), seam, sizeof(seam), ACL_MEMCPY_HOST_TO_DEVICE));
    Report("seam-d2h", aclrtMemcpy(back, sizeof(back), start, sizeof(back), ACL_MEMCPY_DEVICE_TO_HOST));
    Check("seam", std::memcmp(seam, back, sizeof(seam)) == 0);
    uint64_t shareable = 0;
    Report("export", aclrtMemExportToShareableHandle(handles[0], ACL_MEM_HANDLE_TYPE_NONE, 0, &shareable));

    void *ipc = nullptr;
    int32_t words[64];
    for (int i = 0; i < 64; ++i) words[i] = 7 * i;
    Report("ipc-malloc", aclrtMalloc(&ipc, sizeof(words), ACL_MEM_MALLOC_HUGE_FIRST));
    Report("ipc-h2d", aclrtMemcpy(ipc, sizeof(words), words, sizeof(words), ACL_MEMCPY_HOST_TO_DEVICE));
    char key[65] = {};
    Report("ipc-key", aclrtIpcMemGetExportKey(ipc, sizeof(words), key, sizeof(key), ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT));
    Report("ipc-key-null", aclrtIpcMemGetExportKey(ipc, sizeof(words), nullptr, sizeof(key), 0));

    int32_t pid = std::stoi(WaitAndRead(base + ".pid"));
    Report("whitelist", aclrtMemSetPidToShareableHandle(shareable, &pid, 1));
    Report("ipc-whitelist", aclrtIpcMemSetImportPid(key, &pid, 1));
    WriteFile(base + ".handle", std::to_string(shareable));
    WriteFile(base + ".key", key);
    WaitAndRead(base + ".done");

    unsigned char first[4] = {};
    Report("peer-d2h", aclrtMemcpy(first, 4, va, 4, ACL_MEMCPY_DEVICE_TO_HOST));
    Check("peer-wrote-physical", first[0] == 0x7f && first[3] == 0x7f);
    Report("ipc-d2h", aclrtMemcpy(words, sizeof(words), ipc, sizeof(words), ACL_MEMCPY_DEVICE_TO_HOST));
    Check("peer-wrote-ipc", words[0] == 0x01010101 && words[3] == 0x01010101 && words[4] == 28);
    ZeroCopyAndManaged();
    Report("ipc-close", aclrtIpcMemClose(key));
    Report("ipc-free", aclrtFree(ipc));
    Report("release-mapped", aclrtReleaseMemAddress(va));
    Report("unmap-0", aclrtUnmapMem(va));
    Report("unmap-1", aclrtUnmapMem(va + granularity));
    Report("release", aclrtReleaseMemAddress(va));
    Report("free-0", aclrtFreePhysical(handles[0]));
    Report("free-1", aclrtFreePhysical(handles[1]));
    return 0;
}

static int Import(const std::string &base)
{
    int32_t pid = 0;
    Report("bare-tgid", aclrtDeviceGetBareTgid(&pid));
    WriteFile(base + ".pid", std::to_string(pid));
    uint64_t shareable = std::stoull(WaitAndRead(base + ".handle"));
    aclrtDrvMemHandle handle = nullptr;
    Report("import", aclrtMemImportFromShareableHandle(shareable, 0, &handle));
    aclrtPhysicalMemProp prop = DeviceProp();
    size_t granularity = 0;
    Report("granularity", aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &granularity));
    char *va = nullptr;
    Report("reserve", aclrtReserveMemAddress(reinterpret_cast<void **>(&va), granularity, 0, nullptr, 0));
    Report("map", aclrtMapMem(va, granularity, 0, handle, 0));
    float seen[8];
    Report("d2h", aclrtMemcpy(seen, sizeof(seen), va + granularity - sizeof(seen), sizeof(seen),
        ACL_MEMCPY_DEVICE_TO_HOST));
    Check("physical", seen[0] == 100.0f && seen[7] == 107.0f);
    Report("memset", aclrtMemset(va, 4, 0x7f, 4));

    std::string key = WaitAndRead(base + ".key");
    void *ipc = nullptr;
    Report("ipc-import", aclrtIpcMemImportByKey(&ipc, key.c_str(), 0));
    int32_t words[64];
    Report("ipc-d2h", aclrtMemcpy(words, sizeof(words), ipc, sizeof(words), ACL_MEMCPY_DEVICE_TO_HOST));
    Check("ipc", words[0] == 0 && words[63] == 7 * 63);
    Report("ipc-memset", aclrtMemset(ipc, sizeof(words), 0x01, 16));
    Report("ipc-close", aclrtIpcMemClose(key.c_str()));
    Report("unmap", aclrtUnmapMem(va));
    Report("release", aclrtReleaseMemAddress(va));
    Report("free", aclrtFreePhysical(handle));
    WriteFile(base + ".done", "done");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        std::printf("usage: %s export|import <base>\n", argv[0]);
        return 2;
    }
    Report("init", aclInit(nullptr));
    Report("set", aclrtSetDevice(0));
    int code = std::strcmp(argv[1], "export") == 0 ? Export(argv[2]) : Import(argv[2]);
    Report("reset", aclrtResetDeviceForce(0));
    Report("finalize", aclFinalize());
    return code;
}
