/* vnpu bench, figure 14: a C program that links nothing of vnpu, the floor of a program's load. It prints its peak
 * RSS (VmHWM: this program's own, from its exec on) as native.cpp's `load` does. */
#include <stdio.h>
#include <string.h>

int main(void)
{
    char line[256];
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof(line), f))
        if (!strncmp(line, "VmHWM:", 6)) printf("hwm_kib %s", line + 6);
    if (f) fclose(f);
    return 0;
}
