/* Appended to each toolkit library's CFFI source: start the embedded Python of vnpu when the library loads. */
#include <stdio.h>
#include <unistd.h>

/* Before Python starts, name the interpreter that built the toolkit, so the embedded one finds the same
 * installation (its standard library and site-packages: vnpu and its dependencies), whatever python3 PATH
 * holds; if it is gone (its virtual environment moved or deleted), say so before Python tries. Then start it:
 * a library whose Python part cannot start stops the program here, with the reason, rather than answering
 * every call with a silent 0.
 *
 * In a Python process (PyTorch: torch_npu links these libraries, and they load while `import torch` runs) the
 * interpreter is already there and vnpu's Python part runs in it, from that environment's vnpu. Two things are
 * different then, and handled here with the GIL held, before the first call into CFFI:
 * - CFFI's start-up on Python < 3.12 uses PyCapsule_Type.tp_version_tag as a spin lock and waits for it to be 0.
 *   A running interpreter may have given the capsule type a version tag in its method cache (after `import torch`
 *   it has), and CFFI would wait for ever. PyType_Modified, the C API's own way to say a type changed, drops the
 *   type's tag (back to 0, re-assigned at its next lookup); no Python code runs between that and CFFI's lock,
 *   since this thread holds the GIL throughout.
 * - that interpreter must be able to import vnpu's client: if it cannot, one line says so and which environment
 *   built the toolkit (vnpu must be installed in the environment that loads the libraries). */
int VNPU_READY(void);

static int vnpu_host_can_import(void)
{
    static const char *const needed[] = {"_cffi_backend", "client.capi.bridge"};
    for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]); i++) {
        PyObject *module = PyImport_ImportModule(needed[i]);
        if (module == NULL) {
            PyObject *type, *value, *traceback;
            PyErr_Fetch(&type, &value, &traceback);
            PyObject *text = value ? PyObject_Str(value) : NULL;
            const char *why = text ? PyUnicode_AsUTF8(text) : NULL;
            PyErr_Clear();
            fprintf(stderr,
                    "vnpu: " VNPU_LIBRARY " was loaded into a Python process whose environment cannot import "
                    "vnpu's client (%s): install vnpu there (pip install vnpu, or pip install -e " VNPU_SOURCE
                    ", where this toolkit was built by " VNPU_PYTHON_PATH ")\n",
                    why ? why : needed[i]);
            Py_XDECREF(text);
            Py_XDECREF(type);
            Py_XDECREF(value);
            Py_XDECREF(traceback);
            return 0;
        }
        Py_DECREF(module);
    }
    return 1;
}

__attribute__((constructor)) static void vnpu_boot(void)
{
    int ready;
    if (!Py_IsInitialized()) {
        if (access(VNPU_PYTHON_PATH, X_OK) != 0) {
            fprintf(stderr, "vnpu: " VNPU_LIBRARY ": the toolkit was built by " VNPU_PYTHON_PATH
                            ", which no longer exists: run `vnpu toolkit --rebuild` with the Python vnpu is "
                            "installed in, and build against the directory it prints\n");
            _exit(127);
        }
        Py_SetProgramName(VNPU_PYTHON);
        ready = VNPU_READY();
    } else {
        PyGILState_STATE gil = PyGILState_Ensure();
        if (!vnpu_host_can_import()) {
            PyGILState_Release(gil);
            _exit(127);
        }
#if PY_VERSION_HEX < 0x030C0000
        PyType_Modified(&PyCapsule_Type);
#endif
        ready = VNPU_READY();
        PyGILState_Release(gil);
    }
    if (ready != 1) {
        fprintf(stderr, "vnpu: " VNPU_LIBRARY " could not start its Python part (the reason is above); "
                        "rebuild the toolkit with `vnpu toolkit --rebuild`\n");
        _exit(127);
    }
}

#ifdef VNPU_LIBRARY_ascendcl
#include <stdarg.h>
/* aclAppLog is variadic, which CFFI cannot implement in Python: the runtime writes to its log, vnpu to stderr. */
void aclAppLog(aclLogLevel logLevel, const char *func, const char *file, uint32_t line, const char *fmt, ...)
{
    static const char *const levels[] = {"DEBUG", "INFO", "WARNING", "ERROR"};
    char message[1024];
    va_list args;
    va_start(args, fmt);
    vsnprintf(message, sizeof(message), fmt ? fmt : "", args);
    va_end(args);
    fprintf(stderr, "[%s] %s:%u %s: %s\n", (unsigned)logLevel < 4 ? levels[logLevel] : "LOG", file ? file : "?",
            line, func ? func : "?", message);
}

/* The runtime's internal rt* entry points that torch_npu links (no public header declares them): registering a
 * device binary and launching its kernels by stub. vnpu has no device binaries: each answers
 * ACL_ERROR_RT_FEATURE_NOT_SUPPORT (207000), the runtime's own code for it, and says so once on stderr. */
#define VNPU_RT_UNSUPPORTED 207000
static void vnpu_rt_refuse(const char *name)
{
    fprintf(stderr, "vnpu: %s is an internal entry point of CANN's runtime (device binaries and their kernel "
                    "stubs), which vnpu does not have: it answers 207000\n", name);
}
__attribute__((visibility("default"))) int rtDevBinaryRegister(const void *bin, void **handle)
{
    (void)bin;
    (void)handle;
    vnpu_rt_refuse("rtDevBinaryRegister");
    return VNPU_RT_UNSUPPORTED;
}
__attribute__((visibility("default"))) int rtFunctionRegister(void *binHandle, const void *stubFunc,
                                                              const char *stubName, const void *kernelInfoExt,
                                                              uint32_t funcMode)
{
    (void)binHandle;
    (void)stubFunc;
    (void)stubName;
    (void)kernelInfoExt;
    (void)funcMode;
    vnpu_rt_refuse("rtFunctionRegister");
    return VNPU_RT_UNSUPPORTED;
}
__attribute__((visibility("default"))) int rtKernelLaunch(const void *stubFunc, uint32_t blockDim, void *args,
                                                          uint32_t argsSize, void *smDesc, void *stream)
{
    (void)stubFunc;
    (void)blockDim;
    (void)args;
    (void)argsSize;
    (void)smDesc;
    (void)stream;
    vnpu_rt_refuse("rtKernelLaunch");
    return VNPU_RT_UNSUPPORTED;
}
__attribute__((visibility("default"))) int rtGetC2cCtrlAddr(uint64_t *addr, uint32_t *len)
{
    (void)addr;
    (void)len;
    vnpu_rt_refuse("rtGetC2cCtrlAddr");
    return VNPU_RT_UNSUPPORTED;
}
#endif
