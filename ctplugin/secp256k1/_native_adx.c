/* ctplugin.secp256k1._native_adx: the kernel module compiled again with the BMI2/ADX field
 * multiplication (native/field_adx.h) -- the same entries, results and errors as _native.
 * kernel.py loads it when its cpu_supported() says the CPU has BMI2 and ADX, else _native. */
#define CTP_FIELD_ADX 1
#define KERNEL_MODULE _native_adx
#include "_native.c"
