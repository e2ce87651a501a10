// Concurrent task update driven by a second process: the child joins this process's vnpu context (VNPU_CONTEXT) and rewrites the task group on its own update stream while the model waits on an EXTERNAL event.
//
//   outtmp = self + alpha * other      (captured, alpha = 1.1)
//   out    = outtmp + alpha_i * other  (the task group; alpha_i = 1.1, 5.5, 1.1, 5.5)
//
// The parent captures the seed's model (EXTERNAL event wait and reset before the task group), reads its context id
// with vnpuGetContextId (vnpu/vnpu.h: vnpu's one call beyond ACL) and starts itself again (fork + execve of
// /proc/self/exe) with "--updater" and, in hex, the device addresses, the event and the task-group handle: handles
// and device memory belong to the context, so they mean the same in both processes, while aclTensor and aclScalar
// are host objects that the child creates itself. The child's environment gets VNPU_CONTEXT=<context id>; its
// aclInit/aclrtSetDevice then join that context instead of creating one. The two take turns through two pipes:
// "update <alpha>" -> "updated <alpha>", and "stop" -> "stopped <pid>". Each output is checked against float64.
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"
#include "vnpu/vnpu.h"

extern char **environ;

#define ACL_LOG(fmt, args...) fprintf(stdout, "[INFO] " fmt "\n", ##args)
#define ACL_ERR(fmt, args...) fprintf(stderr, "[ERROR] " fmt "\n", ##args)

// Every return code is checked: the failing call, its code and the runtime's message, then exit.
#define CHECK(call)                                                                                      \
    do {                                                                                                 \
        auto ret_ = (call);                                                                              \
        if (ret_ != 0) {                                                                                 \
            const char *msg_ = aclGetRecentErrMsg();                                                     \
            ACL_ERR("%s failed (%s:%d): error %d: %s", #call, __FILE__, __LINE__, static_cast<int>(ret_), \
                    msg_ != nullptr ? msg_ : "(no message)");                                            \
            exit(EXIT_FAILURE);                                                                          \
        }                                                                                                \
    } while (0)
#define CHECK_NOT_NULL(expr)                                                                \
    do {                                                                                    \
        if ((expr) == nullptr) {                                                            \
            const char *msg_ = aclGetRecentErrMsg();                                        \
            ACL_ERR("%s returned NULL (%s:%d): %s", #expr, __FILE__, __LINE__,              \
                    msg_ != nullptr ? msg_ : "(no message)");                               \
            exit(EXIT_FAILURE);                                                             \
        }                                                                                   \
    } while (0)

namespace {
constexpr double kRtol = 1e-5;  // float32 results against a float64 reference
constexpr double kAtol = 1e-6;

int64_t GetShapeSize(const std::vector<int64_t> &shape)
{
    int64_t shapeSize = 1;
    for (auto i : shape) {
        shapeSize *= i;
    }
    return shapeSize;
}

void CreateAclTensor(const std::vector<int64_t> &shape, void **deviceAddr, aclDataType dataType, aclTensor **tensor)
{
    auto size = GetShapeSize(shape) * sizeof(float);
    // 申请Device侧内存
    CHECK(aclrtMalloc(deviceAddr, size, ACL_MEM_MALLOC_HUGE_FIRST));
    // 计算连续tensor的stride
    std::vector<int64_t> strides(shape.size(), 1);
    for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; i--) {
        strides[i] = shape[i + 1] * strides[i + 1];
    }
    // 调用aclCreateTensor接口创建aclTensor
    *tensor = aclCreateTensor(shape.data(), shape.size(), dataType, strides.data(), 0, aclFormat::ACL_FORMAT_ND,
                              shape.data(), shape.size(), *deviceAddr);
    CHECK_NOT_NULL(*tensor);
}

// Deterministic pseudo-random floats in [0.5, 1.5) (xorshift32).
float NextRandom(uint32_t &state)
{
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return 0.5f + static_cast<float>(state >> 8) / static_cast<float>(1u << 24);
}

bool Matches(const float *got, const std::vector<double> &expected, int loop)
{
    bool ok = true;
    for (size_t j = 0; j < expected.size(); j++) {
        if (std::fabs(static_cast<double>(got[j]) - expected[j]) > kAtol + kRtol * std::fabs(expected[j])) {
            ACL_ERR("loop %d: out[%zu] = %.7f, expected %.7f", loop, j, got[j], expected[j]);
            ok = false;
        }
    }
    return ok;
}

constexpr int kTimeoutMs = 30000;  // the longest wait for the other process's answer
const std::vector<int64_t> kShape = {4, 2};

aclTensor *TensorAt(void *deviceAddr)
{
    std::vector<int64_t> strides = {kShape[1], 1};
    aclTensor *tensor = aclCreateTensor(kShape.data(), kShape.size(), aclDataType::ACL_FLOAT, strides.data(), 0,
                                        aclFormat::ACL_FORMAT_ND, kShape.data(), kShape.size(), deviceAddr);
    CHECK_NOT_NULL(tensor);
    return tensor;
}

bool WriteLine(int fd, const std::string &line)
{
    std::string data = line + "\n";
    size_t done = 0;
    while (done < data.size()) {
        ssize_t n = write(fd, data.data() + done, data.size() - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        done += static_cast<size_t>(n);
    }
    return true;
}

// One line from fd (without its newline); false on timeout, end of file or error.
bool ReadLine(int fd, std::string &line, int timeoutMs)
{
    line.clear();
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        int ready = poll(&p, 1, timeoutMs);
        if (ready < 0 && errno == EINTR) {
            continue;
        }
        if (ready <= 0) {
            return false;
        }
        char c = 0;
        ssize_t n = read(fd, &c, 1);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        if (c == '\n') {
            return true;
        }
        line.push_back(c);
    }
}

std::string Hex(const void *value)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%" PRIxPTR, reinterpret_cast<uintptr_t>(value));
    return buf;
}

void *FromHex(const char *text)
{
    return reinterpret_cast<void *>(static_cast<uintptr_t>(strtoull(text, nullptr, 16)));
}

// ======== the second process: the updater ========
// argv: --updater <read fd> <write fd> <outtmp_d> <other_d> <out_d> <event> <handle>
int Updater(char **argv)
{
    int in = atoi(argv[2]);
    int outFd = atoi(argv[3]);
    void *outtmp_d = FromHex(argv[4]);
    void *other_d = FromHex(argv[5]);
    void *out_d = FromHex(argv[6]);
    aclrtEvent event = FromHex(argv[7]);
    aclrtTaskGrp handle = FromHex(argv[8]);
    int32_t devID = 0;
    int pid = static_cast<int>(getpid());

    // 初始化 (VNPU_CONTEXT is set: join the first process's context)
    CHECK(aclInit(nullptr));
    // 指定计算设备
    CHECK(aclrtSetDevice(devID));
    // 在同一个Context中，Device内存、Event、任务组handle可直接使用；aclTensor是Host侧对象，需在本进程中创建
    aclTensor *outtmp = TensorAt(outtmp_d);
    aclTensor *other = TensorAt(other_d);
    aclTensor *out = TensorAt(out_d);
    aclrtStream updateStream = nullptr;
    CHECK(aclrtCreateStream(&updateStream));
    char contextId[256] = {0};
    CHECK(vnpuGetContextId(contextId, sizeof(contextId)));
    if (!WriteLine(outFd, std::string("ready ") + contextId)) {
        ACL_ERR("[pid %d] cannot write to the first process", pid);
        return EXIT_FAILURE;
    }
    std::vector<aclScalar *> scalars;
    std::vector<void *> workspaces;
    std::string line;
    for (;;) {
        if (!ReadLine(in, line, kTimeoutMs)) {
            ACL_ERR("[pid %d] no message from the first process within %d ms", pid, kTimeoutMs);
            return EXIT_FAILURE;
        }
        if (line == "stop") {
            break;
        }
        float value = strtof(line.c_str() + strlen("update "), nullptr);
        aclScalar *updatealpha = aclCreateScalar(&value, aclDataType::ACL_FLOAT);
        CHECK_NOT_NULL(updatealpha);
        scalars.push_back(updatealpha);
        uint64_t workspaceSize2 = 0;
        aclOpExecutor *executor2 = nullptr;
        CHECK(aclnnAddGetWorkspaceSize(outtmp, other, updatealpha, out, &workspaceSize2, &executor2));
        void *workspaceAddr2 = nullptr;
        if (workspaceSize2 > 0) {
            CHECK(aclrtMalloc(&workspaceAddr2, workspaceSize2, ACL_MEM_MALLOC_HUGE_FIRST));
            workspaces.push_back(workspaceAddr2);
        }
        // 开始更新任务，将aclnnAdd算子的alpha参数更新为alpha_i
        CHECK(aclmdlRICaptureTaskUpdateBegin(updateStream, handle));
        CHECK(aclnnAdd(workspaceAddr2, workspaceSize2, executor2, updateStream));
        CHECK(aclmdlRICaptureTaskUpdateEnd(updateStream));
        ACL_LOG("[pid %d] update alpha value of aclnnAdd to %.1f", pid, value);
        // 更新任务之后，在updateStream上，下发Event Record任务，用于通知主流stream1继续执行Event Wait之后的任务
        CHECK(aclrtRecordEvent(event, updateStream));
        CHECK(aclrtSynchronizeStream(updateStream));
        char reply[64];
        snprintf(reply, sizeof(reply), "updated %.9g", value);
        if (!WriteLine(outFd, reply)) {
            ACL_ERR("[pid %d] cannot write to the first process", pid);
            return EXIT_FAILURE;
        }
    }
    // 释放资源
    CHECK(aclrtDestroyStream(updateStream));
    for (aclTensor *tensor : {outtmp, other, out}) {
        CHECK(aclDestroyTensor(tensor));
    }
    for (aclScalar *scalar : scalars) {
        CHECK(aclDestroyScalar(scalar));
    }
    for (void *addr : workspaces) {
        CHECK(aclrtFree(addr));
    }
    CHECK(aclrtResetDevice(devID));
    CHECK(aclFinalize());
    WriteLine(outFd, "stopped " + std::to_string(pid));
    close(in);
    close(outFd);
    return EXIT_SUCCESS;
}

// Starts this program again as the updater; everything the child needs is prepared before fork().
pid_t StartUpdater(const char *contextId, int childIn, int childOut, const std::vector<std::string> &handles)
{
    std::vector<std::string> args = {"update_from_another_process", "--updater", std::to_string(childIn),
                                     std::to_string(childOut)};
    args.insert(args.end(), handles.begin(), handles.end());
    std::vector<char *> argv;
    for (auto &arg : args) {
        argv.push_back(&arg[0]);
    }
    argv.push_back(nullptr);
    std::vector<std::string> env;
    for (char **e = environ; *e != nullptr; e++) {
        if (strncmp(*e, "VNPU_CONTEXT=", strlen("VNPU_CONTEXT=")) != 0) {
            env.emplace_back(*e);
        }
    }
    env.push_back(std::string("VNPU_CONTEXT=") + contextId);  // join that context instead of creating one
    std::vector<char *> envp;
    for (auto &e : env) {
        envp.push_back(&e[0]);
    }
    envp.push_back(nullptr);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        execve("/proc/self/exe", argv.data(), envp.data());
        _exit(127);
    }
    return pid;
}

// Waits for the child to exit; terminates it after kTimeoutMs. Returns its exit status, or -1.
int WaitUpdater(pid_t pid)
{
    for (int waited = 0; waited < kTimeoutMs; waited += 10) {
        int status = 0;
        pid_t done = waitpid(pid, &status, WNOHANG);
        if (done == pid) {
            return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        }
        usleep(10000);
    }
    ACL_ERR("the updater (pid %d) did not stop; terminating it", static_cast<int>(pid));
    kill(pid, SIGTERM);
    waitpid(pid, nullptr, 0);
    return -1;
}
}  // namespace

int main(int argc, char **argv)
{
    setvbuf(stdout, nullptr, _IOLBF, 0);  // two processes share stdout: keep their lines whole and in order
    if (argc == 9 && strcmp(argv[1], "--updater") == 0) {
        return Updater(argv);
    }
    int32_t devID = 0;
    int pid = static_cast<int>(getpid());
    auto size = GetShapeSize(kShape);
    float alphaValue = 1.1f;
    const std::vector<float> stepValues = {1.1f, 5.5f, 1.1f, 5.5f};  // alpha of the task group, one per execution
    void *self_d = nullptr;
    void *other_d = nullptr;
    void *out_d = nullptr;
    void *outtmp_d = nullptr;
    aclTensor *self = nullptr;
    aclTensor *other = nullptr;
    aclTensor *out = nullptr;
    aclTensor *outtmp = nullptr;

    // 初始化
    CHECK(aclInit(nullptr));
    // 指定计算设备
    CHECK(aclrtSetDevice(devID));
    // 准备aclnnAdd算子的输入、输出参数
    CreateAclTensor(kShape, &self_d, aclDataType::ACL_FLOAT, &self);
    CreateAclTensor(kShape, &other_d, aclDataType::ACL_FLOAT, &other);
    CreateAclTensor(kShape, &out_d, aclDataType::ACL_FLOAT, &out);
    CreateAclTensor(kShape, &outtmp_d, aclDataType::ACL_FLOAT, &outtmp);
    aclScalar *alpha = aclCreateScalar(&alphaValue, aclDataType::ACL_FLOAT);
    CHECK_NOT_NULL(alpha);
    // outtmp = self + alpha * other
    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    CHECK(aclnnAddGetWorkspaceSize(self, other, alpha, outtmp, &workspaceSize, &executor));
    void *workspaceAddr = nullptr;
    if (workspaceSize > 0) {
        CHECK(aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST));
    }
    // 更新前：out = outtmp + alpha * other
    uint64_t workspaceSize1 = 0;
    aclOpExecutor *executor1 = nullptr;
    CHECK(aclnnAddGetWorkspaceSize(outtmp, other, alpha, out, &workspaceSize1, &executor1));
    void *workspaceAddr1 = nullptr;
    if (workspaceSize1 > 0) {
        CHECK(aclrtMalloc(&workspaceAddr1, workspaceSize1, ACL_MEM_MALLOC_HUGE_FIRST));
    }
    // 使用aclrtMallocHost申请锁页内存, filled with deterministic pseudo-random inputs
    float *self_h = nullptr;
    float *other_h = nullptr;
    float *out_h = nullptr;
    CHECK(aclrtMallocHost(reinterpret_cast<void **>(&self_h), size * sizeof(float)));
    CHECK(aclrtMallocHost(reinterpret_cast<void **>(&other_h), size * sizeof(float)));
    CHECK(aclrtMallocHost(reinterpret_cast<void **>(&out_h), size * sizeof(float)));
    uint32_t rng = 99991u;
    for (int64_t i = 0; i < size; i++) {
        self_h[i] = NextRandom(rng);
        other_h[i] = NextRandom(rng);
        out_h[i] = 0.0f;
    }

    aclrtStream stream1 = nullptr;
    CHECK(aclrtCreateStream(&stream1));
    // 创建external类型的event
    aclrtEvent event = nullptr;
    CHECK(aclrtCreateEventWithFlag(&event, ACL_EVENT_EXTERNAL));
    // ========开始捕获任务========
    CHECK(aclmdlRICaptureBegin(stream1, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    CHECK(aclrtMemcpyAsync(self_d, size * sizeof(float), self_h, size * sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE,
                           stream1));
    CHECK(aclrtMemcpyAsync(other_d, size * sizeof(float), other_h, size * sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE,
                           stream1));
    CHECK(aclnnAdd(workspaceAddr, workspaceSize, executor, stream1));
    // 在主流stream1上，下发一个Event Wait任务，等待更新任务完成
    CHECK(aclrtStreamWaitEvent(stream1, event));
    CHECK(aclrtResetEvent(event, stream1));
    // 标记要更新的任务
    aclrtTaskGrp handle = nullptr;
    CHECK(aclmdlRICaptureTaskGrpBegin(stream1));
    CHECK(aclnnAdd(workspaceAddr1, workspaceSize1, executor1, stream1));
    CHECK(aclmdlRICaptureTaskGrpEnd(stream1, &handle));
    CHECK(aclrtMemcpyAsync(out_h, size * sizeof(float), out_d, size * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST,
                           stream1));
    // ========结束捕获任务========
    aclmdlRI modelRI = nullptr;
    CHECK(aclmdlRICaptureEnd(stream1, &modelRI));

    // 启动第二个进程，加入本进程的Context
    char contextId[256] = {0};
    CHECK(vnpuGetContextId(contextId, sizeof(contextId)));
    ACL_LOG("[pid %d] context id: %s", pid, contextId);
    int toChild[2];
    int fromChild[2];
    if (pipe(toChild) != 0 || pipe(fromChild) != 0) {
        ACL_ERR("pipe: %s", strerror(errno));
        return EXIT_FAILURE;
    }
    pid_t child = StartUpdater(contextId, toChild[0], fromChild[1],
                               {Hex(outtmp_d), Hex(other_d), Hex(out_d), Hex(event), Hex(handle)});
    if (child < 0) {
        ACL_ERR("fork: %s", strerror(errno));
        return EXIT_FAILURE;
    }
    close(toChild[0]);
    close(fromChild[1]);
    int toUpdater = toChild[1];
    int fromUpdater = fromChild[0];

    int failures = 0;
    std::string line;
    if (!ReadLine(fromUpdater, line, kTimeoutMs) || line.rfind("ready ", 0) != 0) {
        ACL_ERR("[pid %d] no ready message from the updater (got \"%s\")", pid, line.c_str());
        WaitUpdater(child);
        return EXIT_FAILURE;
    }
    std::string joined = line.substr(strlen("ready "));
    ACL_LOG("[pid %d] updater pid %d joined context %s", pid, static_cast<int>(child), joined.c_str());
    if (joined != contextId) {
        ACL_ERR("the updater joined context %s, not %s", joined.c_str(), contextId);
        WriteLine(toUpdater, "stop");
        WaitUpdater(child);
        return EXIT_FAILURE;
    }
    for (size_t i = 0; i < stepValues.size(); i++) {
        float value = stepValues[i];
        ACL_LOG("[pid %d] execute model, loop: %zu", pid, i);
        CHECK(aclmdlRIExecuteAsync(modelRI, stream1));
        // the model runs up to its Event Wait; the other process updates the group and records the event
        char message[64];
        snprintf(message, sizeof(message), "update %.9g", value);
        if (!WriteLine(toUpdater, message) || !ReadLine(fromUpdater, line, kTimeoutMs) ||
            line.rfind("updated ", 0) != 0) {
            ACL_ERR("[pid %d] loop %zu: the updater did not answer (got \"%s\")", pid, i, line.c_str());
            close(toUpdater);
            WaitUpdater(child);
            return EXIT_FAILURE;  // stream1 may still wait on the event: leave the rest to the context's end
        }
        CHECK(aclrtSynchronizeStreamWithTimeout(stream1, kTimeoutMs));
        ACL_LOG("[pid %d] %f %f %f %f %f %f %f %f", pid, out_h[0], out_h[1], out_h[2], out_h[3], out_h[4], out_h[5],
                out_h[6], out_h[7]);
        std::vector<double> expected(size);
        for (int64_t j = 0; j < size; j++) {
            double s = self_h[j];
            double o = other_h[j];
            expected[j] = (s + static_cast<double>(alphaValue) * o) + static_cast<double>(value) * o;
        }
        if (Matches(out_h, expected, static_cast<int>(i))) {
            ACL_LOG("[pid %d] loop %zu matches float64", pid, i);
        } else {
            failures++;
        }
    }
    // 停止第二个进程
    if (!WriteLine(toUpdater, "stop") || !ReadLine(fromUpdater, line, kTimeoutMs)) {
        ACL_ERR("[pid %d] the updater did not acknowledge stop", pid);
        failures++;
    } else {
        ACL_LOG("[pid %d] updater pid %d %s", pid, static_cast<int>(child), line.c_str());
    }
    close(toUpdater);
    close(fromUpdater);
    int childStatus = WaitUpdater(child);
    if (childStatus != 0) {
        ACL_ERR("the updater exited with %d", childStatus);
        failures++;
    }

    // 释放资源
    CHECK(aclmdlRIDestroy(modelRI));
    for (aclTensor *tensor : {self, other, out, outtmp}) {
        CHECK(aclDestroyTensor(tensor));
    }
    CHECK(aclDestroyScalar(alpha));
    for (void *addr : {self_d, other_d, out_d, outtmp_d}) {
        CHECK(aclrtFree(addr));
    }
    CHECK(aclrtFreeHost(self_h));
    CHECK(aclrtFreeHost(other_h));
    CHECK(aclrtFreeHost(out_h));
    CHECK(aclrtDestroyStream(stream1));
    CHECK(aclrtDestroyEvent(event));
    for (void *addr : {workspaceAddr, workspaceAddr1}) {
        if (addr != nullptr) {
            CHECK(aclrtFree(addr));
        }
    }
    // 释放计算设备的资源
    CHECK(aclrtResetDevice(devID));
    // 去初始化
    CHECK(aclFinalize());
    if (failures != 0) {
        ACL_ERR("update_from_another_process: %d failures", failures);
        return EXIT_FAILURE;
    }
    ACL_LOG("update_from_another_process passed");
    return EXIT_SUCCESS;
}
