/* The line diff of two versions of a file, in C: what `wren blame` asks of each snapshot and the next.
 *
 * Optional: setup builds it when a C compiler is there; without it, linediff.py finds the same hunks
 * in Python (slower, the same answers: tests compare the two). It releases the GIL while it works.
 *
 * hunks(old, new) -> list of (i1, i2, j1, j2), or None
 *   old, new  bytes-like versions of a file, split in lines at b"\n" only (a last line may lack one)
 * The changed ranges of a minimal line diff, in order, ends excluded: old lines [i1, i2) became new
 * lines [j1, j2). The same steps as linediff.py's `hunks`, so the same pairing where equal lines could
 * pair either way: lines only one side holds are set aside (they never pair); when what is left is the
 * same on both sides it pairs in order; else its common start and end pair, and Myers' greedy search
 * (its rows kept, read back from the end) pairs the rest. None when that search would pass MAX_STEPS
 * steps: linediff.py then takes difflib's pairing, as it does without this module.
 * The last `new` asked (when it is a bytes object) is held with its lines, so a call whose `old` is that
 * same object does not split and hash it again: each version of a history is read once.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_STEPS 500 /* linediff.py's _MAX_STEPS */

typedef struct {
    const char *at;
    Py_ssize_t len;
    uint64_t hash;
} Line;

typedef struct {
    Py_ssize_t i, j, size;
} Block;

typedef struct {
    Block *items;
    Py_ssize_t len, cap;
} Blocks;

static int push(Blocks *blocks, Py_ssize_t i, Py_ssize_t j, Py_ssize_t size) {
    if (blocks->len == blocks->cap) {
        Py_ssize_t cap = blocks->cap ? blocks->cap * 2 : 16;
        Block *items = realloc(blocks->items, (size_t)cap * sizeof(Block));
        if (items == NULL) return -1;
        blocks->items = items;
        blocks->cap = cap;
    }
    blocks->items[blocks->len++] = (Block){i, j, size};
    return 0;
}

/* A line's hash: eight bytes a step (the line's length mixed in), then the bytes left. */
static uint64_t hash_of(const char *p, Py_ssize_t n) {
    uint64_t hash = 0x9E3779B97F4A7C15ULL ^ (uint64_t)n;
    Py_ssize_t k = 0;
    for (; k + 8 <= n; k += 8) {
        uint64_t word;
        memcpy(&word, p + k, 8);
        hash = (hash ^ word) * 0xff51afd7ed558ccdULL;
        hash ^= hash >> 32;
    }
    uint64_t tail = 0;
    memcpy(&tail, p + k, (size_t)(n - k));
    hash = (hash ^ tail) * 0xc4ceb9fe1a85ec53ULL;
    return hash ^ (hash >> 29);
}

/* The lines of buf, each hashed; NULL when memory runs out. */
static Line *split(const char *p, Py_ssize_t n, Py_ssize_t *count) {
    Py_ssize_t cap = n / 32 + 16, lines = 0;
    Line *found = malloc((size_t)cap * sizeof(Line));
    if (found == NULL) return NULL;
    for (const char *q = p, *end = p + n; q < end;) {
        const char *newline = memchr(q, '\n', (size_t)(end - q));
        const char *stop = newline != NULL ? newline + 1 : end;
        if (lines == cap) {
            Line *more = realloc(found, (size_t)(cap *= 2) * sizeof(Line));
            if (more == NULL) {
                free(found);
                return NULL;
            }
            found = more;
        }
        found[lines++] = (Line){q, stop - q, hash_of(q, stop - q)};
        q = stop;
    }
    *count = lines;
    return found;
}

static int same(const Line *a, const Line *b) {
    return a->hash == b->hash && a->len == b->len && memcmp(a->at, b->at, (size_t)a->len) == 0;
}

/* An open-addressing set of lines (their indexes + 1 in `lines`). */
typedef struct {
    Py_ssize_t *slots;
    size_t mask;
    const Line *lines;
} Set;

static int set_make(Set *set, const Line *lines, Py_ssize_t n) {
    size_t size = 16;
    while (size < (size_t)n * 2) size *= 2;
    set->slots = calloc(size, sizeof(Py_ssize_t));
    if (set->slots == NULL) return -1;
    set->mask = size - 1;
    set->lines = lines;
    for (Py_ssize_t k = 0; k < n; k++) {
        size_t at = (size_t)lines[k].hash & set->mask;
        while (set->slots[at] != 0 && !same(&lines[set->slots[at] - 1], &lines[k])) at = (at + 1) & set->mask;
        if (set->slots[at] == 0) set->slots[at] = k + 1;
    }
    return 0;
}

static int set_has(const Set *set, const Line *line) {
    size_t at = (size_t)line->hash & set->mask;
    while (set->slots[at] != 0) {
        if (same(&set->lines[set->slots[at] - 1], line)) return 1;
        at = (at + 1) & set->mask;
    }
    return 0;
}

/* Myers' search over a[0:n] and b[0:m] (indexes into `lines_a`/`lines_b` through ka and kb); its blocks,
 * from the start, appended to `out` in order. 1 when it would pass MAX_STEPS steps, -1 when memory ran out. */
static int myers(const Line *la, const Py_ssize_t *ka, Py_ssize_t n, const Line *lb, const Py_ssize_t *kb,
                 Py_ssize_t m, Py_ssize_t x0, Py_ssize_t y0, Blocks *out) {
    if (n == 0 || m == 0) return 0;
    if (n - m > MAX_STEPS || m - n > MAX_STEPS) return 1;
    Py_ssize_t offset = n + m + 1;
    Py_ssize_t steps = n + m < MAX_STEPS ? n + m : MAX_STEPS;
    Py_ssize_t *v = calloc((size_t)(2 * offset + 1), sizeof(Py_ssize_t));
    /* Row d (v before step d, k from -d - 1 to d + 1) starts at d * d + 2 * d. */
    Py_ssize_t *rows = malloc((size_t)((steps + 1) * (steps + 1) + 2 * (steps + 1)) * sizeof(Py_ssize_t));
    if (v == NULL || rows == NULL) {
        free(v);
        free(rows);
        return -1;
    }
    Py_ssize_t end = -1;
    for (Py_ssize_t d = 0; d <= steps && end < 0; d++) {
        memcpy(rows + d * d + 2 * d, v + offset - d - 1, (size_t)(2 * d + 3) * sizeof(Py_ssize_t));
        for (Py_ssize_t k = -d; k <= d; k += 2) {
            Py_ssize_t x;
            if (k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1]))
                x = v[offset + k + 1];
            else
                x = v[offset + k - 1] + 1;
            Py_ssize_t y = x - k;
            while (x < n && y < m && same(&la[ka[x0 + x]], &lb[kb[y0 + y]])) {
                x++;
                y++;
            }
            v[offset + k] = x;
            if (x >= n && y >= m) {
                end = d;
                break;
            }
        }
    }
    free(v);
    if (end < 0) {
        free(rows);
        return 1;
    }
    /* Read back from (n, m): each step's diagonal run is a block; they come last first. */
    Py_ssize_t first = out->len;
    Py_ssize_t x = n, y = m;
    int failed = 0;
    for (Py_ssize_t d = end; d > 0 && !failed; d--) {
        const Py_ssize_t *row = rows + d * d + 2 * d;
        Py_ssize_t k = x - y;
        int down = k == -d || (k != d && row[k - 1 + d + 1] < row[k + 1 + d + 1]);
        Py_ssize_t previous = down ? k + 1 : k - 1;
        Py_ssize_t px = row[previous + d + 1];
        Py_ssize_t py = px - previous;
        Py_ssize_t run = x - px < y - py ? x - px : y - py;
        if (run > 0) failed = push(out, x0 + x - run, y0 + y - run, run);
        x = px;
        y = py;
    }
    if (!failed && x > 0 && y > 0) failed = push(out, x0, y0, x < y ? x : y);
    free(rows);
    if (failed) return -1;
    for (Py_ssize_t lo = first, hi = out->len - 1; lo < hi; lo++, hi--) {
        Block swap = out->items[lo];
        out->items[lo] = out->items[hi];
        out->items[hi] = swap;
    }
    return 0;
}

/* One version: its lines and the set of them. */
typedef struct {
    Line *lines;
    Py_ssize_t n;
    Set set;
} Side;

static void side_free(Side *side) {
    free(side->lines);
    free(side->set.slots);
    *side = (Side){NULL, 0, {NULL, 0, NULL}};
}

static int side_make(Side *side, const char *p, Py_ssize_t len) {
    side->lines = split(p, len, &side->n);
    if (side->lines == NULL || set_make(&side->set, side->lines, side->n) < 0) {
        side_free(side);
        return -1;
    }
    return 0;
}

/* The work, without the GIL: the hunks into `out` as (i1, i2, j1, j2) quads. 0, 1 (past MAX_STEPS) or -1. */
static int diff(const Side *a, const Side *b, Blocks *out) {
    const Line *la = a->lines, *lb = b->lines;
    Py_ssize_t n = a->n, m = b->n, nk = 0, mk = 0;
    Py_ssize_t *ka = malloc((size_t)(n ? n : 1) * sizeof(Py_ssize_t));
    Py_ssize_t *kb = malloc((size_t)(m ? m : 1) * sizeof(Py_ssize_t));
    Blocks blocks = {NULL, 0, 0};
    int status = -1;
    if (ka == NULL || kb == NULL) goto done;
    /* Lines only one side holds never pair: the rest (kept) is paired. */
    for (Py_ssize_t i = 0; i < n; i++)
        if (set_has(&b->set, &la[i])) ka[nk++] = i;
    for (Py_ssize_t j = 0; j < m; j++)
        if (set_has(&a->set, &lb[j])) kb[mk++] = j;
    int equal = nk == mk;
    for (Py_ssize_t t = 0; equal && t < nk; t++) equal = same(&la[ka[t]], &lb[kb[t]]);
    if (equal) {
        if (nk > 0 && push(&blocks, 0, 0, nk) < 0) goto done;
    } else {
        Py_ssize_t start = 0, end = 0;
        while (start < nk && start < mk && same(&la[ka[start]], &lb[kb[start]])) start++;
        while (end < nk - start && end < mk - start && same(&la[ka[nk - 1 - end]], &lb[kb[mk - 1 - end]])) end++;
        if (start > 0 && push(&blocks, 0, 0, start) < 0) goto done;
        int searched = myers(la, ka, nk - start - end, lb, kb, mk - start - end, start, start, &blocks);
        if (searched != 0) {
            status = searched;
            goto done;
        }
        if (end > 0 && push(&blocks, nk - end, mk - end, end) < 0) goto done;
    }
    /* Each paired line in place; a hunk wherever either side skips lines between two paired ones. */
    Py_ssize_t x = 0, y = 0;
    for (Py_ssize_t k = 0; k <= blocks.len; k++) {
        Py_ssize_t size = k < blocks.len ? blocks.items[k].size : 1;
        for (Py_ssize_t t = 0; t < size; t++) {
            Py_ssize_t i = k < blocks.len ? ka[blocks.items[k].i + t] : n;
            Py_ssize_t j = k < blocks.len ? kb[blocks.items[k].j + t] : m;
            if ((i > x || j > y) && (push(out, x, i, y) < 0 || push(out, j, 0, 0) < 0)) goto done;
            x = i + 1;
            y = j + 1;
        }
    }
    status = 0;
done:
    free(ka);
    free(kb);
    free(blocks.items);
    return status;
}

/* The last `new` version asked (a bytes object, held), its lines and set: blame asks each version as `new`, then
 * as the next pair's `old`, so each is split and hashed once. Read and replaced only with the GIL held. */
static PyObject *last_new = NULL;
static Side last_side = {NULL, 0, {NULL, 0, NULL}};

static PyObject *hunks(PyObject *self, PyObject *args) {
    PyObject *old, *new;
    if (!PyArg_ParseTuple(args, "OO", &old, &new)) return NULL;
    Py_buffer a, b;
    if (PyObject_GetBuffer(old, &a, PyBUF_SIMPLE) < 0) return NULL;
    if (PyObject_GetBuffer(new, &b, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&a);
        return NULL;
    }
    Side sa = {NULL, 0, {NULL, 0, NULL}}, sb = {NULL, 0, {NULL, 0, NULL}};
    int cached = last_new != NULL && old == last_new;
    if (cached) { /* taken: another thread's call while this one works (GIL released) finds no cache */
        sa = last_side;
        last_side = (Side){NULL, 0, {NULL, 0, NULL}};
        Py_CLEAR(last_new);
    }
    Blocks out = {NULL, 0, 0};
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = (!cached && side_make(&sa, a.buf, a.len) < 0) || side_make(&sb, b.buf, b.len) < 0 ? -1 : 0;
    if (status == 0) status = diff(&sa, &sb, &out);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&a);
    PyBuffer_Release(&b);
    side_free(&sa);
    side_free(&last_side);
    Py_CLEAR(last_new);
    if (status >= 0 && PyBytes_CheckExact(new)) { /* immutable: its lines stay what they are */
        last_side = sb;
        last_new = Py_NewRef(new);
    } else {
        side_free(&sb);
    }
    if (status < 0) {
        free(out.items);
        return PyErr_NoMemory();
    }
    if (status > 0) {
        free(out.items);
        Py_RETURN_NONE;
    }
    /* Two blocks a hunk: (i1, i2, j1) then (j2, -, -). */
    PyObject *found = PyList_New(out.len / 2);
    for (Py_ssize_t h = 0; found != NULL && h < out.len / 2; h++) {
        Block first = out.items[2 * h], second = out.items[2 * h + 1];
        PyObject *quad = Py_BuildValue("(nnnn)", first.i, first.j, first.size, second.i);
        if (quad == NULL) {
            Py_CLEAR(found);
            break;
        }
        PyList_SetItem(found, h, quad);
    }
    free(out.items);
    return found;
}

static PyMethodDef methods[] = {
    {"hunks", hunks, METH_VARARGS, "hunks(old, new) -> [(i1, i2, j1, j2)] or None: a minimal line diff's hunks."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_linediff", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__linediff(void) { return PyModule_Create(&module); }
