/* Field and 256-bit multiplication with the x86-64 BMI2/ADX instructions (mulx, adcx, adox):
 * two independent carry chains per row of the schoolbook product, and the reduction mod p
 * folded in, all in registers.  About 1.9x the throughput of the portable C (field.h) on the
 * machines this project runs on.
 *
 * Compiled only into the kernel module built with CTP_FIELD_ADX (ctplugin.secp256k1._native_adx,
 * the same sources as _native); kernel.py loads that module only when the CPU reports BMI2 and
 * ADX (kernel_cpu_supported below), and the portable module otherwise.  Its _selftest compares
 * these functions with the portable ones (still compiled in, under *_portable_ names).
 *
 * Results and preconditions are those of the portable functions: inputs weakly reduced (any
 * 256-bit value), outputs weakly reduced; r may alias a or b.  PUBLIC DATA ONLY (the kernel's
 * rule, although nothing here branches).
 */
#ifndef CTPLUGIN_FIELD_ADX_H
#define CTPLUGIN_FIELD_ADX_H

#if !defined(__x86_64__) || !defined(__GNUC__)
#error "field_adx.h needs x86-64 and GCC-style inline assembly"
#endif

#include <cpuid.h>

/* BMI2 (mulx: leaf 7 EBX bit 8) and ADX (adcx/adox: leaf 7 EBX bit 19). */
static int kernel_cpu_supported(void) {
    unsigned a, b, c, d;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 8)) && (b & (1u << 19));
}

/* One row of the product: (T0..T4) += rdx·b with T4 fresh; CF carries the low halves, OF the
 * high halves; afterwards T0 is final. */
#define FE_ADX_ROW_(T0, T1, T2, T3, T4, OFF)                                                      \
    "movq " OFF "(%[a]), %%rdx\n\t"                                                              \
    "xorl %k[zero], %k[zero]\n\t"                                                                \
    "mulxq 0(%[b]), %[lo], %[hi]\n\t"                                                            \
    "adcxq %[lo], %[" T0 "]\n\t"                                                                 \
    "adoxq %[hi], %[" T1 "]\n\t"                                                                 \
    "mulxq 8(%[b]), %[lo], %[hi]\n\t"                                                            \
    "adcxq %[lo], %[" T1 "]\n\t"                                                                 \
    "adoxq %[hi], %[" T2 "]\n\t"                                                                 \
    "mulxq 16(%[b]), %[lo], %[hi]\n\t"                                                           \
    "adcxq %[lo], %[" T2 "]\n\t"                                                                 \
    "adoxq %[hi], %[" T3 "]\n\t"                                                                 \
    "mulxq 24(%[b]), %[lo], %[" T4 "]\n\t"                                                       \
    "adcxq %[lo], %[" T3 "]\n\t"                                                                 \
    "adoxq %[zero], %[" T4 "]\n\t"                                                               \
    "adcxq %[zero], %[" T4 "]\n\t"

/* The four product rows of a·b: limbs 0..3 to the memory operand l, 4..7 in r4, r0, r1, r2. */
#define FE_ADX_PRODUCT_                                                                           \
    "movq 0(%[a]), %%rdx\n\t"                                                                    \
    "mulxq 0(%[b]), %[r0], %[r1]\n\t"                                                            \
    "mulxq 8(%[b]), %[lo], %[r2]\n\t"                                                            \
    "addq %[lo], %[r1]\n\t"                                                                      \
    "mulxq 16(%[b]), %[lo], %[r3]\n\t"                                                           \
    "adcq %[lo], %[r2]\n\t"                                                                      \
    "mulxq 24(%[b]), %[lo], %[r4]\n\t"                                                           \
    "adcq %[lo], %[r3]\n\t"                                                                      \
    "adcq $0, %[r4]\n\t"                                                                         \
    "movq %[r0], 0(%[l])\n\t"                                                                     \
    FE_ADX_ROW_("r1", "r2", "r3", "r4", "r0", "8")                                               \
    "movq %[r1], 8(%[l])\n\t"                                                                     \
    FE_ADX_ROW_("r2", "r3", "r4", "r0", "r1", "16")                                              \
    "movq %[r2], 16(%[l])\n\t"                                                                    \
    FE_ADX_ROW_("r3", "r4", "r0", "r1", "r2", "24")                                              \
    "movq %[r3], 24(%[l])\n\t"

/* r = (l[0..3] + (H0..H3)·2^256) mod p, weakly reduced (l: the staged low limbs, Z: a free
 * register): + H·C (C = 2^32 + 977), then the top
 * limb t (< 2^34) as + t·C, then C once more if that wrapped past 2^256 (the value is then below
 * 2^68, so it cannot wrap again). */
#define FE_ADX_REDUCE_(H0, H1, H2, H3, Z)                                                            \
    "movabsq $0x1000003D1, %%rdx\n\t"                                                            \
    "xorl %k[" Z "], %k[" Z "]\n\t"                                                                \
    "mulxq %[" H0 "], %[" H0 "], %[hi]\n\t"                                                      \
    "adcxq 0(%[l]), %[" H0 "]\n\t"                                                                \
    "mulxq %[" H1 "], %[" H1 "], %[lo]\n\t"                                                      \
    "adoxq %[hi], %[" H1 "]\n\t"                                                                 \
    "adcxq 8(%[l]), %[" H1 "]\n\t"                                                                \
    "mulxq %[" H2 "], %[" H2 "], %[hi]\n\t"                                                      \
    "adoxq %[lo], %[" H2 "]\n\t"                                                                 \
    "adcxq 16(%[l]), %[" H2 "]\n\t"                                                               \
    "mulxq %[" H3 "], %[" H3 "], %[lo]\n\t"                                                      \
    "adoxq %[hi], %[" H3 "]\n\t"                                                                 \
    "adcxq 24(%[l]), %[" H3 "]\n\t"                                                               \
    "adoxq %[" Z "], %[lo]\n\t"                                                                   \
    "adcxq %[" Z "], %[lo]\n\t"                                                                   \
    "mulxq %[lo], %[lo], %[hi]\n\t"                                                              \
    "addq %[lo], %[" H0 "]\n\t"                                                                  \
    "adcq %[hi], %[" H1 "]\n\t"                                                                  \
    "adcq $0, %[" H2 "]\n\t"                                                                     \
    "adcq $0, %[" H3 "]\n\t"                                                                     \
    "sbbq %[lo], %[lo]\n\t"                                                                      \
    "andq %%rdx, %[lo]\n\t"                                                                      \
    "addq %[lo], %[" H0 "]\n\t"                                                                  \
    "adcq $0, %[" H1 "]\n\t"                                                                     \
    "adcq $0, %[" H2 "]\n\t"                                                                     \
    "adcq $0, %[" H3 "]\n\t"                                                                     \
    "movq %[" H0 "], 0(%[r])\n\t"                                                                \
    "movq %[" H1 "], 8(%[r])\n\t"                                                                \
    "movq %[" H2 "], 16(%[r])\n\t"                                                               \
    "movq %[" H3 "], 24(%[r])\n\t"

/* The full 512-bit product l = a·b (the scalar arithmetic reduces it mod N). */
static inline void u256_mul_512_adx(u64 l[8], const u64 a[4], const u64 b[4]) {
    u64 r0, r1, r2, r3, r4, lo, hi, zero;
    __asm__(FE_ADX_PRODUCT_
            "movq %[r4], 32(%[l])\n\t"
            "movq %[r0], 40(%[l])\n\t"
            "movq %[r1], 48(%[l])\n\t"
            "movq %[r2], 56(%[l])\n\t"
            : [r0] "=&r"(r0), [r1] "=&r"(r1), [r2] "=&r"(r2), [r3] "=&r"(r3), [r4] "=&r"(r4),
              [lo] "=&r"(lo), [hi] "=&r"(hi), [zero] "=&r"(zero), "=m"(*(u64(*)[8])l)
            : [a] "r"(a), [b] "r"(b), [l] "r"(l), "m"(*(const u64(*)[4])a),
              "m"(*(const u64(*)[4])b)
            : "rdx", "cc");
}

/* r = a·b mod p. */
static inline void fe_mul_adx(fe *r, const fe *a, const fe *b) {
    u64 l[4], r0, r1, r2, r3, r4, lo, hi, zero;
    __asm__(FE_ADX_PRODUCT_
            FE_ADX_REDUCE_("r4", "r0", "r1", "r2", "zero")
            : [r0] "=&r"(r0), [r1] "=&r"(r1), [r2] "=&r"(r2), [r3] "=&r"(r3), [r4] "=&r"(r4),
              [lo] "=&r"(lo), [hi] "=&r"(hi), [zero] "=&r"(zero), "=m"(l), "=m"(r->n)
            : [a] "r"(a->n), [b] "r"(b->n), [r] "r"(r->n), [l] "r"(l), "m"(a->n), "m"(b->n)
            : "rdx", "cc");
}

/* r = a² mod p: the 6 cross products once, doubled, plus the 4 squares (10 mulx, not 16). */
static inline void fe_sqr_adx(fe *r, const fe *a) {
    u64 l[4], t1, t2, t3, t4, t5, t6, t7, lo, hi;
    __asm__(
        /* cross products a_i·a_j, i < j, into t1..t6 */
        "movq 0(%[a]), %%rdx\n\t"
        "mulxq 8(%[a]), %[t1], %[t2]\n\t"
        "mulxq 16(%[a]), %[lo], %[t3]\n\t"
        "addq %[lo], %[t2]\n\t"
        "mulxq 24(%[a]), %[lo], %[t4]\n\t"
        "adcq %[lo], %[t3]\n\t"
        "adcq $0, %[t4]\n\t"
        "movq 8(%[a]), %%rdx\n\t"
        "xorl %k[t7], %k[t7]\n\t" /* t7 = 0 serves as the zero here */
        "mulxq 16(%[a]), %[lo], %[hi]\n\t"
        "adcxq %[lo], %[t3]\n\t"
        "adoxq %[hi], %[t4]\n\t"
        "mulxq 24(%[a]), %[lo], %[t5]\n\t"
        "adcxq %[lo], %[t4]\n\t"
        "adoxq %[t7], %[t5]\n\t"
        "adcxq %[t7], %[t5]\n\t"
        "movq 16(%[a]), %%rdx\n\t"
        "mulxq 24(%[a]), %[lo], %[t6]\n\t"
        "addq %[lo], %[t5]\n\t"
        "adcq $0, %[t6]\n\t"
        /* doubled; t7 takes the bit shifted out */
        "xorl %k[t7], %k[t7]\n\t"
        "addq %[t1], %[t1]\n\t"
        "adcq %[t2], %[t2]\n\t"
        "adcq %[t3], %[t3]\n\t"
        "adcq %[t4], %[t4]\n\t"
        "adcq %[t5], %[t5]\n\t"
        "adcq %[t6], %[t6]\n\t"
        "adcq $0, %[t7]\n\t"
        /* plus the squares a_i² at limbs 2i, 2i+1 (one carry chain: mulx leaves the flags) */
        "movq 0(%[a]), %%rdx\n\t"
        "mulxq %%rdx, %[lo], %[hi]\n\t"
        "movq %[lo], 0(%[l])\n\t"
        "addq %[hi], %[t1]\n\t"
        "movq 8(%[a]), %%rdx\n\t"
        "mulxq %%rdx, %[lo], %[hi]\n\t"
        "adcq %[lo], %[t2]\n\t"
        "adcq %[hi], %[t3]\n\t"
        "movq 16(%[a]), %%rdx\n\t"
        "mulxq %%rdx, %[lo], %[hi]\n\t"
        "adcq %[lo], %[t4]\n\t"
        "adcq %[hi], %[t5]\n\t"
        "movq 24(%[a]), %%rdx\n\t"
        "mulxq %%rdx, %[lo], %[hi]\n\t"
        "adcq %[lo], %[t6]\n\t"
        "adcq %[hi], %[t7]\n\t"
        "movq %[t1], 8(%[l])\n\t"
        "movq %[t2], 16(%[l])\n\t"
        "movq %[t3], 24(%[l])\n\t"
        FE_ADX_REDUCE_("t4", "t5", "t6", "t7", "t1") /* (t1 is staged: free) */
        : [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4), [t5] "=&r"(t5),
          [t6] "=&r"(t6), [t7] "=&r"(t7), [lo] "=&r"(lo), [hi] "=&r"(hi), "=m"(l), "=m"(r->n)
        : [a] "r"(a->n), [r] "r"(r->n), [l] "r"(l), "m"(a->n)
        : "rdx", "cc");
}

#endif
