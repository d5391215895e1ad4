/* Subset sums over a point table: for each path (a list of table indices), the sum of those
 * points -- DLC adaptor points and surjection-proof ring keys.  PUBLIC DATA ONLY (variable time).
 *
 * Consecutive paths sharing a prefix share its partial sum: the paths form a trie (a path shares
 * with the previous one its common prefix), every trie node is its parent + one table point, and
 * the nodes of one depth are added in affine coordinates sharing one inversion
 * (fe_inv_all_var), so each node costs about 6 field multiplications and the results come out
 * affine.
 *
 * Preconditions: table points on the curve (or flagged infinity); every index < the table size;
 * off[0] = 0, off nondecreasing, off[npaths] < 2^32 - 1 (node ids are 32-bit), maxlen = the
 * longest path.  Memory: O(total indices) from malloc; returns 0 on allocation failure.
 */
#ifndef CTPLUGIN_SUBSET_H
#define CTPLUGIN_SUBSET_H

#include <stdint.h>
#include <stdlib.h>

#include "group.h"

#define SUBSET_NONE ((uint32_t)0xFFFFFFFFu)

/* The trie of the paths, nodes in depth-first order. */
typedef struct {
    size_t nn;               /* nodes */
    uint32_t *parent;        /* parent node, SUBSET_NONE at depth 0 */
    uint32_t *point_of;      /* the table index this node adds */
    uint32_t *depth;
    uint32_t *node_of_path;  /* last node of each path, SUBSET_NONE for an empty path */
} subset_trie_;

static void subset_trie_free_(subset_trie_ *t) {
    free(t->parent);
    free(t->point_of);
    free(t->depth);
    free(t->node_of_path);
}

/* Build the trie: each path adds nodes below its common prefix with the previous path. */
static int subset_trie_build_(subset_trie_ *t, const uint32_t *idx, const size_t *off,
                              size_t npaths, size_t maxlen) {
    const size_t total = off[npaths];
    t->nn = 0;
    t->parent = malloc((total + 1) * sizeof *t->parent);
    t->point_of = malloc((total + 1) * sizeof *t->point_of);
    t->depth = malloc((total + 1) * sizeof *t->depth);
    t->node_of_path = malloc((npaths + 1) * sizeof *t->node_of_path);
    uint32_t *stack = malloc((maxlen + 1) * sizeof *stack); /* node at each depth of the path */
    int ok = t->parent && t->point_of && t->depth && t->node_of_path && stack;
    size_t prev_off = 0, prev_len = 0;
    for (size_t i = 0; ok && i < npaths; i++) {
        const size_t len = off[i + 1] - off[i];
        const uint32_t *path = idx + off[i];
        size_t common = 0;
        while (common < len && common < prev_len && path[common] == idx[prev_off + common]) common++;
        for (size_t d = common; d < len; d++) {
            t->parent[t->nn] = d ? stack[d - 1] : SUBSET_NONE;
            t->point_of[t->nn] = path[d];
            t->depth[t->nn] = (uint32_t)d;
            stack[d] = (uint32_t)t->nn++;
        }
        t->node_of_path[i] = len ? stack[len - 1] : SUBSET_NONE;
        prev_off = off[i];
        prev_len = len;
    }
    free(stack);
    return ok;
}

/* order[level_start[d] .. level_start[d+1]) = the nodes of depth d (counting sort). */
static int subset_levels_(uint32_t *order, size_t *level_start, const subset_trie_ *t,
                          size_t maxlen) {
    size_t *fill = malloc((maxlen + 1) * sizeof *fill);
    if (!fill) return 0;
    memset(level_start, 0, (maxlen + 2) * sizeof *level_start);
    for (size_t k = 0; k < t->nn; k++) level_start[t->depth[k] + 1]++;
    for (size_t d = 0; d < maxlen; d++) level_start[d + 1] += level_start[d];
    memcpy(fill, level_start, (maxlen + 1) * sizeof *fill);
    for (size_t k = 0; k < t->nn; k++) order[fill[t->depth[k]]++] = (uint32_t)k;
    free(fill);
    return 1;
}

/* Node values: finite points in val, infinity flagged in inf. */
typedef struct {
    ge_xy *val;
    unsigned char *inf;
} subset_values_;

enum { SUBSET_TAKE_POINT = 3, SUBSET_TAKE_PARENT = 4 }; /* beside PAIR_ADD/DOUBLE/CANCEL */

/* The nodes order[lo..hi) of one depth >= 1: value = parent + table point, the divisions of all
 * of them sharing one inversion.  kind, den, inv: scratch of hi - lo elements. */
static void subset_add_level_(subset_values_ *v, const ge_xy *tab, const unsigned char *tab_inf,
                              const subset_trie_ *t, const uint32_t *order, size_t lo, size_t hi,
                              unsigned char *kind, fe *den, fe *inv) {
    const size_t m = hi - lo;
    for (size_t j = 0; j < m; j++) {
        const uint32_t k = order[lo + j], par = t->parent[k], pt = t->point_of[k];
        if (v->inf[par] || tab_inf[pt]) {
            kind[j] = v->inf[par] ? SUBSET_TAKE_POINT : SUBSET_TAKE_PARENT;
            den[j] = FE_ONE;
        } else {
            kind[j] = (unsigned char)ge_xy_pair_denominator(&den[j], &v->val[par], &tab[pt]);
        }
    }
    fe_inv_all_var(inv, den, m, inv);
    for (size_t j = 0; j < m; j++) {
        const uint32_t k = order[lo + j], par = t->parent[k], pt = t->point_of[k];
        switch (kind[j]) {
        case SUBSET_TAKE_POINT:
            v->val[k] = tab[pt];
            v->inf[k] = tab_inf[pt];
            break;
        case SUBSET_TAKE_PARENT:
            v->val[k] = v->val[par];
            v->inf[k] = 0;
            break;
        case PAIR_CANCEL:
            v->inf[k] = 1;
            break;
        default:
            ge_xy_pair_sum(&v->val[k], &v->val[par], &tab[pt], &inv[j], kind[j]);
            v->inf[k] = 0;
        }
    }
}

/* out[i] = Σ table[idx[j]] for j in [off[i], off[i+1]). */
static int subset_sums_var(ge *out, const ge *table, size_t ntable, const uint32_t *idx,
                           const size_t *off, size_t npaths, size_t maxlen) {
    subset_trie_ t = {0};
    const size_t total = off[npaths];
    uint32_t *order = malloc((total + 1) * sizeof *order);
    size_t *level_start = malloc((maxlen + 2) * sizeof *level_start);
    ge_xy *tab = malloc((ntable + 1) * sizeof *tab);
    unsigned char *tab_inf = malloc(ntable + 1);
    subset_values_ v = {NULL, NULL};
    fe *den = NULL, *inv = NULL;
    unsigned char *kind = NULL;
    int ok = order && level_start && tab && tab_inf &&
             subset_trie_build_(&t, idx, off, npaths, maxlen) &&
             subset_levels_(order, level_start, &t, maxlen);
    if (ok) { /* per-node arrays sized by the trie, not by the (larger) number of indices */
        v.val = malloc((t.nn + 1) * sizeof *v.val);
        v.inf = malloc(t.nn + 1);
        den = malloc((t.nn + 1) * sizeof *den);
        inv = malloc((t.nn + 1) * sizeof *inv);
        kind = malloc(t.nn + 1);
        ok = v.val && v.inf && den && inv && kind;
    }
    if (ok) {
        for (size_t i = 0; i < ntable; i++) {
            tab[i].x = table[i].x;
            tab[i].y = table[i].y;
            tab_inf[i] = (unsigned char)table[i].inf;
        }
        for (size_t j = 0; maxlen && j < level_start[1]; j++) { /* depth 0: the table point */
            v.val[order[j]] = tab[t.point_of[order[j]]];
            v.inf[order[j]] = tab_inf[t.point_of[order[j]]];
        }
        for (size_t d = 1; d < maxlen; d++)
            subset_add_level_(&v, tab, tab_inf, &t, order, level_start[d], level_start[d + 1],
                              kind, den, inv);
        for (size_t i = 0; i < npaths; i++) {
            const uint32_t k = t.node_of_path[i];
            out[i].inf = k == SUBSET_NONE || v.inf[k];
            out[i].x = out[i].inf ? FE_ZERO : v.val[k].x;
            out[i].y = out[i].inf ? FE_ZERO : v.val[k].y;
        }
    }
    subset_trie_free_(&t);
    free(order);
    free(level_start);
    free(tab);
    free(tab_inf);
    free(v.val);
    free(v.inf);
    free(den);
    free(inv);
    free(kind);
    return ok;
}

#endif
