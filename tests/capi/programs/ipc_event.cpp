// IPC events from C, in the shape of CANN's ipcevent sample: process A creates an ACL_EVENT_IPC event, records
// it and writes the 64-byte handle to a file; process B opens the handle, waits on it from its own stream and
// queries it; A keeps the event until B says it is done (another file). The same for a notify, as the notify
// samples share one: B writes its pid (aclrtDeviceGetBareTgid), A lists it (aclrtNotifySetImportPid), records
// the notify and writes its export key; B imports it and waits on it.
// Usage: ipc_event export <handle file> <done file> | ipc_event import <handle file> <done file>
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

static bool Exists(const char *path)
{
    return std::ifstream(path).good();
}

static void WriteFile(const std::string &path, const std::string &text)
{
    std::ofstream(path + ".part") << text;
    std::rename((path + ".part").c_str(), path.c_str());
}

static std::string WaitAndRead(const std::string &path)
{
    for (int i = 0; i < 600 && !Exists(path.c_str()); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::string text;
    std::ifstream(path) >> text;
    return text;
}

static void ExportNotify(const std::string &base)
{
    aclrtNotify notify = nullptr;
    Report("notify", aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT));
    char key[65] = {};
    Report("notify-key", aclrtNotifyGetExportKey(notify, key, sizeof(key), ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT));
    int32_t pid = std::stoi(WaitAndRead(base + ".pid"));
    Report("notify-pid", aclrtNotifySetImportPid(notify, &pid, 1));
    Report("notify-pid-null", aclrtNotifySetImportPid(notify, nullptr, 1));
    Report("notify-record", aclrtRecordNotify(notify, nullptr));
    Report("notify-sync", aclrtSynchronizeStream(nullptr));
    WriteFile(base + ".key", key);
}

static void ImportNotify(const std::string &base)
{
    aclrtNotify notify = nullptr;
    Report("notify-import", aclrtNotifyImportByKey(&notify, WaitAndRead(base + ".key").c_str(), 0));
    aclrtStream stream = nullptr;
    Report("notify-stream", aclrtCreateStream(&stream));
    Report("notify-wait", aclrtWaitAndResetNotify(notify, stream, 10));
    Report("notify-sync", aclrtSynchronizeStream(stream));
    Report("notify-destroy", aclrtDestroyNotify(notify));
    Report("notify-destroy-stream", aclrtDestroyStream(stream));
}

static int Export(const char *handlePath, const char *donePath)
{
    ExportNotify(handlePath);
    aclrtEvent event = nullptr, plain = nullptr;
    aclrtStream stream = nullptr;
    Report("create", aclrtCreateEventExWithFlag(&event, ACL_EVENT_IPC));
    Report("create-plain", aclrtCreateEventExWithFlag(&plain, ACL_EVENT_SYNC));
    Report("stream", aclrtCreateStream(&stream));
    Report("record", aclrtRecordEvent(event, stream));
    Report("sync", aclrtSynchronizeEvent(event));
    aclrtEventRecordedStatus status = ACL_EVENT_RECORDED_STATUS_NOT_READY;
    Report("query", aclrtQueryEventStatus(event, &status));
    std::printf("status %d\n", status);
    aclrtIpcEventHandle handle;
    Report("handle-plain", aclrtIpcGetEventHandle(plain, &handle));
    Report("handle-null", aclrtIpcGetEventHandle(event, nullptr));
    Report("handle", aclrtIpcGetEventHandle(event, &handle));
    std::ofstream(std::string(handlePath) + ".part", std::ios::binary).write(handle.reserved, sizeof(handle.reserved));
    std::rename((std::string(handlePath) + ".part").c_str(), handlePath);
    for (int i = 0; i < 600 && !Exists(donePath); ++i) {  // B opens and uses the event meanwhile (60 s at most)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::printf("importer-done %d\n", Exists(donePath) ? 1 : 0);
    Report("destroy", aclrtDestroyEvent(event));
    Report("destroy-plain", aclrtDestroyEvent(plain));
    Report("destroy-stream", aclrtDestroyStream(stream));
    return 0;
}

static int Import(const char *handlePath, const char *donePath)
{
    int32_t pid = 0;
    Report("bare-tgid", aclrtDeviceGetBareTgid(&pid));
    WriteFile(std::string(handlePath) + ".pid", std::to_string(pid));
    ImportNotify(handlePath);
    for (int i = 0; i < 600 && !Exists(handlePath); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    aclrtIpcEventHandle handle;
    std::memset(&handle, 0, sizeof(handle));
    std::ifstream(handlePath, std::ios::binary).read(handle.reserved, sizeof(handle.reserved));
    aclrtEvent event = nullptr;
    Report("open-null", aclrtIpcOpenEventHandle(handle, nullptr));
    Report("open", aclrtIpcOpenEventHandle(handle, &event));
    aclrtStream stream = nullptr;
    Report("stream", aclrtCreateStream(&stream));
    Report("wait", aclrtStreamWaitEvent(stream, event));
    Report("sync", aclrtSynchronizeStream(stream));
    aclrtEventRecordedStatus status = ACL_EVENT_RECORDED_STATUS_NOT_READY;
    Report("query", aclrtQueryEventStatus(event, &status));
    std::printf("status %d\n", status);
    Report("destroy", aclrtDestroyEvent(event));
    Report("destroy-stream", aclrtDestroyStream(stream));
    std::ofstream(donePath) << "done\n";
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        std::printf("usage: %s export|import <handle file> <done file>\n", argv[0]);
        return 2;
    }
    Report("init", aclInit(nullptr));
    Report("set", aclrtSetDevice(0));
    int code = std::strcmp(argv[1], "export") == 0 ? Export(argv[2], argv[3]) : Import(argv[2], argv[3]);
    Report("reset", aclrtResetDevice(0));
    Report("finalize", aclFinalize());
    return code;
}
