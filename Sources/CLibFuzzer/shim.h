// libFuzzer's driver, for a program that keeps its own main. It is defined only
// when linking with -sanitize=fuzzer; ferry-fuzz refers to it only in that build.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
