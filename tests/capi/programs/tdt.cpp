// TDT from C++: two datasets of random data through a channel of capacity 2 (the bytes, dims and types that come
// back; a third send under capacity pressure, with and without a timeout; a receive from the empty channel),
// then misuse of data items, datasets and channels, and queues with a route bound, queried, read back and
// unbound. Prints "name code [message]" lines for calls, "name value" lines for what the program checked.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "acl/acl.h"
#include "acl/acl_tdt.h"
#include "acl/acl_tdt_queue.h"

static void Report(const char *name, aclError code)
{
    const char *message = code == ACL_SUCCESS ? nullptr : aclGetRecentErrMsg();
    std::printf("%s %d%s%s\n", name, code, message ? " " : "", message ? message : "");
}

static void Null(const char *name, const void *pointer)
{
    const char *message = pointer == nullptr ? aclGetRecentErrMsg() : nullptr;
    std::printf("%s %s%s%s\n", name, pointer == nullptr ? "NULL" : "ok", message ? " " : "", message ? message : "");
}

struct Tensors {
    std::vector<float> floats;
    std::vector<int32_t> ints;
    acltdtDataset *dataset;
};

static Tensors MakeDataset(std::mt19937 &random)
{
    Tensors t{std::vector<float>(12), std::vector<int32_t>(5), acltdtCreateDataset()};
    std::uniform_real_distribution<float> real(-1.0F, 1.0F);
    for (auto &value : t.floats) {
        value = real(random);
    }
    for (auto &value : t.ints) {
        value = static_cast<int32_t>(random());
    }
    int64_t matrix[] = {3, 4};
    int64_t vector[] = {5};
    acltdtAddDataItem(t.dataset, acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, matrix, 2, ACL_FLOAT, t.floats.data(),
                                                      t.floats.size() * sizeof(float)));
    acltdtAddDataItem(t.dataset, acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, vector, 1, ACL_INT32, t.ints.data(),
                                                      t.ints.size() * sizeof(int32_t)));
    return t;
}

// whether `received` holds what `sent` holds: item count, dims, types, sizes and bytes (in memory of its own)
static int Same(const Tensors &sent, acltdtDataset *received)
{
    if (acltdtGetDatasetSize(received) != 2) {
        return 0;
    }
    const void *data[] = {sent.floats.data(), sent.ints.data()};
    const size_t sizes[] = {sent.floats.size() * sizeof(float), sent.ints.size() * sizeof(int32_t)};
    const aclDataType types[] = {ACL_FLOAT, ACL_INT32};
    const std::vector<int64_t> shapes[] = {{3, 4}, {5}};
    for (size_t i = 0; i < 2; ++i) {
        acltdtDataItem *item = acltdtGetDataItem(received, i);
        std::vector<int64_t> dims(acltdtGetDimNumFromItem(item));
        if (dims.empty() || acltdtGetDimsFromItem(item, dims.data(), dims.size()) != ACL_SUCCESS) {
            return 0;
        }
        const void *got = acltdtGetDataAddrFromItem(item);
        if (dims != shapes[i] || acltdtGetDataTypeFromItem(item) != types[i] ||
            acltdtGetTensorTypeFromItem(item) != ACL_TENSOR_DATA_TENSOR || acltdtGetDataSizeFromItem(item) != sizes[i] ||
            got == data[i] || std::memcmp(got, data[i], sizes[i]) != 0) {
            return 0;
        }
    }
    return 1;
}

static void Channels()
{
    std::mt19937 random(20260101);
    acltdtChannelHandle *channel = acltdtCreateChannelWithCapacity(0, "program_channel", 2);
    Null("create", channel);
    Tensors first = MakeDataset(random);
    Tensors second = MakeDataset(random);
    Report("send-1", acltdtSendTensor(channel, first.dataset, 1000));
    size_t size = 99;
    Report("size-call", acltdtQueryChannelSize(channel, &size));
    std::printf("size-after-1 %zu\n", size);
    Report("send-2", acltdtSendTensor(channel, second.dataset, 0));
    acltdtQueryChannelSize(channel, &size);
    std::printf("size-after-2 %zu\n", size);
    Report("send-3-now", acltdtSendTensor(channel, first.dataset, 0));
    Report("send-3-wait", acltdtSendTensor(channel, first.dataset, 20));
    acltdtQueryChannelSize(channel, &size);
    std::printf("size-after-3 %zu\n", size);

    acltdtDataset *received = acltdtCreateDataset();
    Report("receive-1", acltdtReceiveTensor(channel, received, 1000));
    std::printf("same-1 %d\n", Same(first, received));
    Report("receive-2", acltdtReceiveTensor(channel, received, 0));  // a dataset a receive filled takes the next
    std::printf("same-2 %d\n", Same(second, received));
    Report("receive-empty", acltdtReceiveTensor(channel, received, 0));
    Report("receive-empty-wait", acltdtReceiveTensor(channel, received, 20));

    // misuse
    Report("add-to-received", acltdtAddDataItem(received, acltdtGetDataItem(first.dataset, 0)));
    Report("receive-into-own", acltdtReceiveTensor(channel, first.dataset, 0));
    Null("get-out-of-range", acltdtGetDataItem(first.dataset, 2));
    int64_t one[1];
    Report("dims-too-few", acltdtGetDimsFromItem(acltdtGetDataItem(first.dataset, 0), one, 1));
    Null("item-null-dims", acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, nullptr, 2, ACL_FLOAT, nullptr, 0));
    Null("item-end-with-dims", acltdtCreateDataItem(ACL_TENSOR_DATA_END_OF_SEQUENCE, one, 1, ACL_FLOAT, nullptr, 0));
    Null("capacity-0", acltdtCreateChannelWithCapacity(0, "program_zero", 0));
    Report("size-null", acltdtQueryChannelSize(channel, nullptr));
    std::printf("type-of-null %d\n", static_cast<int>(acltdtGetTensorTypeFromItem(nullptr)));
    std::printf("size-of-null %zu\n", acltdtGetDatasetSize(nullptr));
    size_t sliceNum = 9;
    size_t sliceId = 9;
    Report("slice", acltdtGetSliceInfoFromItem(acltdtGetDataItem(first.dataset, 0), &sliceNum, &sliceId));
    std::printf("slice-info %zu %zu\n", sliceNum, sliceId);

    acltdtSendTensor(channel, second.dataset, 0);
    Report("clean", acltdtCleanChannel(channel));
    acltdtQueryChannelSize(channel, &size);
    std::printf("size-after-clean %zu\n", size);
    Report("stop", acltdtStopChannel(channel));
    Report("destroy", acltdtDestroyChannel(channel));
    Report("size-destroyed", acltdtQueryChannelSize(channel, &size));
    Report("destroy-received", acltdtDestroyDataset(received));
    for (Tensors *t : {&first, &second}) {
        for (size_t i = 0; i < acltdtGetDatasetSize(t->dataset); ++i) {
            acltdtDestroyDataItem(acltdtGetDataItem(t->dataset, i));
        }
        acltdtDestroyDataset(t->dataset);
    }
}

static uint32_t Queue(acltdtQueueAttr *attr, const char *name, const char *label)
{
    const char *pointer = name;
    acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_NAME_PTR, sizeof(pointer), &pointer);
    uint32_t qid = 0;
    Report(label, acltdtCreateQueue(attr, &qid));
    return qid;
}

static void Queues()
{
    acltdtQueueAttr *attr = acltdtCreateQueueAttr();
    uint32_t depth = 3;
    Report("attr-depth", acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_DEPTH_UINT32, sizeof(depth), &depth));
    uint64_t wide = 3;
    Report("attr-depth-wide", acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_DEPTH_UINT32, sizeof(wide), &wide));
    uint32_t src = Queue(attr, "program_src", "queue-src");
    const char *name = nullptr;
    size_t got = 0;
    Report("attr-name-get", acltdtGetQueueAttr(attr, ACL_TDT_QUEUE_NAME_PTR, sizeof(name), &got, &name));
    std::printf("attr-name %s %zu\n", name ? name : "(null)", got);
    uint16_t narrow = 0;
    Report("attr-depth-narrow", acltdtGetQueueAttr(attr, ACL_TDT_QUEUE_DEPTH_UINT32, sizeof(narrow), &got, &narrow));
    Queue(attr, "program_src", "queue-same-name");
    uint32_t dst = Queue(attr, "program_dst", "queue-dst");
    std::printf("queues-differ %d\n", src != dst ? 1 : 0);

    acltdtQueueRoute *route = acltdtCreateQueueRoute(src, dst);
    acltdtQueueRouteList *bind = acltdtCreateQueueRouteList();
    acltdtAddQueueRoute(bind, route);
    Report("bind", acltdtBindQueueRoutes(bind));
    acltdtQueueRouteQueryInfo *info = acltdtCreateQueueRouteQueryInfo();
    acltdtQueueRouteList *found = acltdtCreateQueueRouteList();
    Report("query-no-mode", acltdtQueryQueueRoutes(info, found));
    acltdtQueueRouteQueryMode mode = ACL_TDT_QUEUE_ROUTE_QUERY_SRC_AND_DST;
    acltdtSetQueueRouteQueryInfo(info, ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM, sizeof(mode), &mode);
    acltdtSetQueueRouteQueryInfo(info, ACL_TDT_QUEUE_ROUTE_QUERY_SRC_ID_UINT32, sizeof(src), &src);
    Report("query-no-dst", acltdtQueryQueueRoutes(info, found));
    acltdtSetQueueRouteQueryInfo(info, ACL_TDT_QUEUE_ROUTE_QUERY_DST_ID_UINT32, sizeof(dst), &dst);
    Report("query", acltdtQueryQueueRoutes(info, found));
    std::printf("routes %zu\n", acltdtGetQueueRouteNum(found));
    acltdtQueueRoute *view = acltdtCreateQueueRoute(0, 0);
    Report("get-route", acltdtGetQueueRoute(found, 0, view));
    Report("get-route-1", acltdtGetQueueRoute(found, 1, view));
    uint32_t s = 0;
    uint32_t d = 0;
    int32_t status = -1;
    acltdtGetQueueRouteParam(view, ACL_TDT_QUEUE_ROUTE_SRC_UINT32, sizeof(s), &got, &s);
    acltdtGetQueueRouteParam(view, ACL_TDT_QUEUE_ROUTE_DST_UINT32, sizeof(d), &got, &d);
    acltdtGetQueueRouteParam(view, ACL_TDT_QUEUE_ROUTE_STATUS_INT32, sizeof(status), &got, &status);
    std::printf("route-matches %d\n", s == src && d == dst ? 1 : 0);
    std::printf("route-status %d\n", status);
    Report("unbind", acltdtUnbindQueueRoutes(bind));
    acltdtQueryQueueRoutes(info, found);
    std::printf("routes-after-unbind %zu\n", acltdtGetQueueRouteNum(found));
    // data through the queue of depth 3: random bytes and a user tag come back, a fourth enqueue is refused
    std::mt19937 random(7);
    std::vector<uint8_t> bytes(100);
    for (auto &b : bytes) {
        b = static_cast<uint8_t>(random());
    }
    const char tag[] = "tag";
    for (int i = 0; i < 3; ++i) {
        acltdtEnqueueData(src, bytes.data(), bytes.size(), tag, sizeof(tag), 0, 0);
    }
    Report("enqueue-full", acltdtEnqueueData(src, bytes.data(), bytes.size(), nullptr, 0, 0, 0));
    Report("enqueue-null", acltdtEnqueueData(src, nullptr, 4, nullptr, 0, 0, 0));
    std::vector<uint8_t> back(128);
    char user[8] = {};
    size_t length = 0;
    Report("dequeue-small", acltdtDequeueData(src, back.data(), 10, &length, user, sizeof(user), 0));
    Report("dequeue", acltdtDequeueData(src, back.data(), back.size(), &length, user, sizeof(user), 0));
    std::printf("dequeued %zu %d %s\n", length, std::memcmp(back.data(), bytes.data(), bytes.size()) == 0 ? 1 : 0,
                user);
    Report("destroy-dst", acltdtDestroyQueue(dst));
    Report("destroy-dst-again", acltdtDestroyQueue(dst));
    Report("destroy-src", acltdtDestroyQueue(src));
    acltdtDestroyQueueRoute(view);
    acltdtDestroyQueueRoute(route);
    acltdtDestroyQueueRouteList(found);
    acltdtDestroyQueueRouteList(bind);
    acltdtDestroyQueueRouteQueryInfo(info);
    Report("destroy-attr", acltdtDestroyQueueAttr(attr));
    Report("destroy-attr-again", acltdtDestroyQueueAttr(attr));
}

int main()
{
    Report("init", aclInit(nullptr));
    Report("set-device", aclrtSetDevice(0));
    Channels();
    Queues();
    Report("reset", aclrtResetDeviceForce(0));
    Report("finalize", aclFinalize());
    return 0;
}
