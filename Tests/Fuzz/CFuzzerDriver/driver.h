// libFuzzer's driver, for a program that has a main of its own (SwiftPM names every executable's entry point):
// linked only by `-sanitize=fuzzer` builds (`make fuzz`).
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

// libFuzzer's own mutation of a buffer, for a custom mutator to call (`HCIMutator`).
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
