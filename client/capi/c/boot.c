/* Appended to each toolkit library's CFFI source: start the embedded Python of vnpu when the library loads. */
#include <stdio.h>
#include <unistd.h>

/* Before Python starts, name the interpreter that built the toolkit, so the embedded one finds the same
 * installation (its standard library and site-packages: vnpu and its dependencies), whatever python3 PATH
 * holds; if it is gone (its virtual environment moved or deleted), say so before Python tries. Then start it:
 * a library whose Python part cannot start stops the program here, with the reason, rather than answering
 * every call with a silent 0. */
int VNPU_READY(void);

__attribute__((constructor)) static void vnpu_boot(void)
{
    if (!Py_IsInitialized()) {
        if (access(VNPU_PYTHON_PATH, X_OK) != 0) {
            fprintf(stderr, "vnpu: " VNPU_LIBRARY ": the toolkit was built by " VNPU_PYTHON_PATH
                            ", which no longer exists: run `vnpu toolkit --rebuild` with the Python vnpu is "
                            "installed in, and build against the directory it prints\n");
            _exit(127);
        }
        Py_SetProgramName(VNPU_PYTHON);
    }
    if (VNPU_READY() != 1) {
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
#endif
