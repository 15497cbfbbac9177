/* The reader's line check in C: where each line ends and whether it carries our valid CRC suffix.
 *
 * Optional: setup builds it when a C compiler is there; without it, reader.py checks the same
 * lines in Python (slower, same verdicts). It releases the GIL while it works, so the reader can
 * decode one run of lines in the main thread while this checks the same run in another.
 *
 * check_lines(buf, base) -> (count, ends, whole)
 *   buf   a bytes-like run of whole lines (it ends with a newline)
 *   base  the file offset of buf[0]
 * count is how many lines from the start are "ours and clean": no NUL and no CR byte, at least 20
 * bytes before the newline, ending in ,"crc":"xxxxxxxx"} with 8 lowercase hex digits equal to the
 * CRC-32 (zlib's polynomial) of the bytes before ,"crc". ends holds base + the offset just past
 * each of those lines' newlines, as native 8-byte integers (array('q').frombytes reads it).
 * whole is True when those lines are all of buf. A line that is not ours and clean is not an
 * error: count stops before it and Python decides.
 *
 * make_line(seq, ts, body) -> bytes
 *   The writer's line in one allocation: {"seq":SEQ,"ts":"TS", then body without its braces, then
 *   ,"crc":"xxxxxxxx"} and a newline, the CRC taken over everything before ,"crc". body is the
 *   msgspec encoding of the event (a JSON object); writer.py builds the same bytes in Python.
 *
 * check_start(buf, base) -> Pending; Pending.result() -> what check_lines(buf, base) gives
 *   The check begun in a POSIX thread of its own, which never takes the GIL (_fastpath decodes
 *   meanwhile).
 *
 * read_start(fd, offset, size) -> Reading; Reading.result() -> (data, got, cut, count, ends, whole, first_seq)
 *   Up to size bytes of the file from offset read (pread) in a POSIX thread of its own, its whole
 *   lines checked there as check_lines checks them (each piece of the chunk's as soon as it is read,
 *   while it is in the cache): data is a bytes of size bytes, of which
 *   got were read (fewer than size: the end of the file), the first cut (just past the last newline
 *   read; 0: none) are whole lines, and (count, ends, whole) is check_lines(data[:cut], offset).
 *   first_seq is the first seq when seq_follows says yes of each of those lines, else -1.
 *   A read that fails raises its OSError from result().
 *   _fastpath.read_ahead reads the next chunk so while Python decodes this one.
 *
 * follows(events, first) -> bool
 *   Whether decoded events' seqs are first, first + 1, ... and their ts are set; False at any doubt.
 *
 * scan_calls(buf, prev_seq, stop_seq) -> (end, seq, marks, lines, reached)
 *   A fork's scan (forking._scanned_line_end): the lines check_lines accepts that also start as the
 *   writer starts a line, with the seqs after prev_seq, up to the line of stop_seq. marks, in
 *   order: a str for a tool message answering that call id, a tuple of str for a message asking
 *   for those calls, None for a line to decode (in lines, each with its newline; the line of
 *   stop_seq is always one). end is just past the last line taken, seq its seq, reached whether
 *   it was stop_seq's line.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "../_crc32.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_CLMUL 1 /* x86 with GCC or clang: the AVX2 paths below, chosen at import */
#endif

/* The first newline, NUL or CR in [p, end), or NULL: one pass where three memchr would make three. */
#ifdef HAVE_CLMUL
static int use_avx2; /* set at import when the CPU has AVX2 */

/* find_stop, 32 bytes at a time. */
__attribute__((target("avx2"))) static const unsigned char *find_stop_avx2(const unsigned char *p,
                                                                            const unsigned char *end) {
    const __m256i nl = _mm256_set1_epi8('\n'), cr = _mm256_set1_epi8('\r'), nul = _mm256_setzero_si256();
    while (end - p >= 32) {
        __m256i v = _mm256_loadu_si256((const __m256i *)p);
        unsigned m = (unsigned)_mm256_movemask_epi8(_mm256_or_si256(
            _mm256_or_si256(_mm256_cmpeq_epi8(v, nl), _mm256_cmpeq_epi8(v, cr)), _mm256_cmpeq_epi8(v, nul)));
        if (m) return p + __builtin_ctz(m);
        p += 32;
    }
    return p;
}
#endif

static const unsigned char *find_stop(const unsigned char *p, const unsigned char *end) {
#ifdef HAVE_CLMUL
    if (use_avx2) {
        p = find_stop_avx2(p, end);
        if (p < end && (*p == '\n' || *p == '\r' || *p == '\0')) return p;
    }
#endif
#ifdef __SSE2__
    const __m128i nl = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r'), nul = _mm_setzero_si128();
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)p);
        int m = _mm_movemask_epi8(
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, nl), _mm_cmpeq_epi8(v, cr)), _mm_cmpeq_epi8(v, nul)));
        if (m) return p + __builtin_ctz((unsigned)m);
        p += 16;
    }
#endif
    for (; p < end; p++)
        if (*p == '\n' || *p == '\r' || *p == '\0') return p;
    return NULL;
}

static const char CRC_MARK[] = ",\"crc\":\""; /* 8 bytes */
#define SUFFIX_LEN 18                         /* ,"crc":"xxxxxxxx"} */

/* Each byte's value as a lowercase hex digit, 0x10 for any other byte (uppercase and anything else: Python
 * reads that line). A table, not comparisons: a CRC's digits are random, and a branch on each would be
 * mispredicted half the time. Filled by hex_init at import. */
static unsigned char hex_values[256];

static void hex_init(void) {
    for (int ch = 0; ch < 256; ch++)
        hex_values[ch] = ch >= '0' && ch <= '9' ? (unsigned char)(ch - '0')
                         : ch >= 'a' && ch <= 'f' ? (unsigned char)(ch - 'a' + 10)
                                                  : 0x10;
}

/* 1 when the line (without its newline, and with no NUL or CR: find_stop saw to that) is ours, else 0. */
static int line_ok(const unsigned char *line, Py_ssize_t len) {
    if (len < SUFFIX_LEN + 2) return 0;
    const unsigned char *tail = line + len - SUFFIX_LEN;
    if (memcmp(tail, CRC_MARK, 8) != 0 || tail[16] != '"' || tail[17] != '}') return 0;
    uint32_t expected = 0, bad = 0;
    for (int k = 8; k < 16; k++) {
        uint32_t v = hex_values[tail[k]];
        bad |= v;
        expected = expected << 4 | (v & 0xF);
    }
    if (bad & 0x10) return 0;
    return crc32_of(line, len - SUFFIX_LEN) == expected;
}

static int seq_follows(const unsigned char *line, const unsigned char *nl, Py_ssize_t i, long long *first);

/* The check itself, with no Python object touched: it may run in a thread that never holds the GIL. From pos
 * (a line's start) up to size, each line that passes has its end (base + just past its newline) written at
 * out[*count], *count counting them; with *seqs, seq_follows is asked of each while it is in the cache (*first
 * set by line 0), and *seqs falls to 0 at its first no. Where it stops: size, or the start of the first line
 * that does not pass (or is cut short by size). It takes up again from there with the same state. */
static Py_ssize_t check_from(const unsigned char *buf, Py_ssize_t pos, Py_ssize_t size, long long base, int64_t *out,
                             Py_ssize_t *count, long long *first, int *seqs) {
    Py_ssize_t n = *count;
    while (pos < size) {
        const unsigned char *nl = find_stop(buf + pos, buf + size);
        if (nl == NULL || *nl != '\n') break; /* a partial last line, or a NUL or CR: Python decides */
        Py_ssize_t len = nl - (buf + pos);
        if (!line_ok(buf + pos, len)) break;
        if (*seqs) *seqs = seq_follows(buf + pos, nl, n, first);
        pos += len + 1;
        out[n++] = (int64_t)(base + pos);
    }
    *count = n;
    return pos;
}

/* check_from over the whole of buf. With first_seq (else NULL), also the first seq when seq_follows says yes
 * of every line taken (else -1). */
static void check_core(const unsigned char *buf, Py_ssize_t size, long long base, int64_t *out, Py_ssize_t *count_out,
                       Py_ssize_t *pos_out, long long *first_seq) {
    Py_ssize_t count = 0;
    long long first = -1;
    int seqs = first_seq != NULL;
    *pos_out = check_from(buf, 0, size, base, out, &count, &first, &seqs);
    *count_out = count;
    if (first_seq != NULL) *first_seq = seqs && count > 0 ? first : -1;
}

/* A line that passes has at least SUFFIX_LEN + 3 bytes with its newline: that bounds the ends. They are
 * written to memory of our own (malloc: a thread without the GIL fills it), then copied to bytes of the size
 * found: the limited API has no bytes to shrink in place, and the copy is 8 bytes a line of at least 21. */
static int64_t *new_ends(Py_ssize_t size) {
    int64_t *ends = malloc((size_t)(size / (SUFFIX_LEN + 3) + 1) * sizeof(int64_t));
    if (ends == NULL) PyErr_NoMemory();
    return ends;
}

/* (count, ends, whole), and the ends' memory freed. */
static PyObject *checked(int64_t *ends, Py_ssize_t count, Py_ssize_t pos, Py_ssize_t size) {
    PyObject *bytes = PyBytes_FromStringAndSize((const char *)ends, count * (Py_ssize_t)sizeof(int64_t));
    free(ends);
    if (bytes == NULL) return NULL;
    return Py_BuildValue("(nNO)", count, bytes, pos == size ? Py_True : Py_False);
}

static PyObject *check_lines(PyObject *self, PyObject *args) {
    Py_buffer view;
    long long base;
    if (!PyArg_ParseTuple(args, "y*L", &view, &base)) return NULL;
    int64_t *ends = new_ends(view.len);
    if (ends == NULL) {
        PyBuffer_Release(&view);
        return NULL;
    }
    Py_ssize_t count, pos, size = view.len;
    Py_BEGIN_ALLOW_THREADS
    check_core((const unsigned char *)view.buf, size, base, ends, &count, &pos, NULL);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    return checked(ends, count, pos, size);
}

#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
/* check_start(buf, base) -> Pending: the same check, begun in a thread of C's own (it never takes the
 * GIL, so it starts at once and runs beside whatever Python does); Pending.result() waits for it and
 * gives what check_lines gives. The buffer is held until then. */
#include <errno.h>
#include <unistd.h>
typedef struct {
    PyObject_HEAD Py_buffer view;
    long long base;
    int64_t *ends;
    Py_ssize_t count, pos;
    pthread_t thread;
    int running;
    /* read_start's: the bytes read into (NULL for check_start), the descriptor, what was read, the error */
    PyObject *data;
    unsigned char *into; /* data's memory, taken while the GIL was held */
    int fd, error;
    Py_ssize_t size, got, cut;
    long long first_seq; /* the first seq when seq_follows said yes of every line checked, else -1 */
} Pending;

/* read_start's reading, in pieces of this size: each piece's whole lines are checked as soon as it is read,
 * while its bytes are still in the cache (a chunk is bigger than the cache; checked after the whole chunk,
 * each line would be fetched from memory again). */
#define PIECE ((Py_ssize_t)1 << 17)

/* read_start's work: size bytes from base (fewer at the end of the file), in as many preads as it takes,
 * and the whole lines among them checked as check_core checks them, piece by piece (check_from takes up
 * where it stopped: the same lines, ends and seqs as one check over them all). */
static void pending_read_check(Pending *p, unsigned char *buf) {
    Py_ssize_t got = 0, cut = 0, pos = 0, count = 0;
    long long first = -1;
    int seqs = 1, going = 1; /* going: every line checked so far passed */
    while (got < p->size) {
        Py_ssize_t want = p->size - got < PIECE ? p->size - got : PIECE;
        ssize_t n = pread(p->fd, buf + got, (size_t)want, (off_t)(p->base + got));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            p->error = errno;
            return;
        }
        if (n == 0) break;
        Py_ssize_t end = got + n;
        while (end > got && buf[end - 1] != '\n') end--;
        got += n;
        if (end == got - n) continue; /* no newline among the new bytes: the line goes on */
        cut = end;                    /* just past the last newline read */
        if (going) {
            pos = check_from(buf, pos, cut, p->base, p->ends, &count, &first, &seqs);
            going = pos == cut;
        }
    }
    p->got = got, p->cut = cut, p->pos = pos, p->count = count;
    p->first_seq = seqs && count > 0 ? first : -1;
}

static void *pending_run(void *arg) {
    Pending *p = (Pending *)arg;
    if (p->data == NULL) {
        check_core((const unsigned char *)p->view.buf, p->view.len, p->base, p->ends, &p->count, &p->pos, NULL);
        return NULL;
    }
    pending_read_check(p, p->into);
    return NULL;
}

static void pending_join(Pending *p) {
    if (!p->running) return;
    Py_BEGIN_ALLOW_THREADS
    pthread_join(p->thread, NULL);
    Py_END_ALLOW_THREADS
    p->running = 0;
}

static void pending_dealloc(Pending *p) {
    PyTypeObject *type = Py_TYPE((PyObject *)p); /* a heap type: each of its objects holds a reference to it */
    pending_join(p);
    if (p->view.obj != NULL) PyBuffer_Release(&p->view);
    Py_XDECREF(p->data);
    free(p->ends);
    PyObject_Free(p);
    Py_DECREF(type);
}

static PyObject *pending_result(Pending *p, PyObject *unused) {
    if (p->ends == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "check_start: result() was already taken");
        return NULL;
    }
    pending_join(p);
    int64_t *ends = p->ends;
    p->ends = NULL;
    Py_ssize_t size = p->view.len;
    PyBuffer_Release(&p->view);
    return checked(ends, p->count, p->pos, size);
}

static PyMethodDef pending_methods[] = {
    {"result", (PyCFunction)pending_result, METH_NOARGS, "result() -> (count, ends, whole): waits for the check."},
    {NULL, NULL, 0, NULL},
};

/* Reading.result(): (data, got, cut, count, ends, whole, first_seq), or the read's OSError. */
static PyObject *reading_result(Pending *p, PyObject *unused) {
    if (p->ends == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "read_start: result() was already taken");
        return NULL;
    }
    pending_join(p);
    int64_t *ends = p->ends;
    p->ends = NULL;
    if (p->error != 0) {
        free(ends);
        errno = p->error;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    PyObject *bytes = PyBytes_FromStringAndSize((const char *)ends, p->count * (Py_ssize_t)sizeof(int64_t));
    free(ends);
    if (bytes == NULL) return NULL;
    PyObject *data = p->data; /* the caller's now */
    p->data = NULL;
    return Py_BuildValue("(NnnnNOL)", data, p->got, p->cut, p->count, bytes, p->pos == p->cut ? Py_True : Py_False,
                         p->first_seq);
}

static PyMethodDef reading_methods[] = {
    {"result", (PyCFunction)reading_result, METH_NOARGS,
     "result() -> (data, got, cut, count, ends, whole, first_seq): waits for the read and the check."},
    {NULL, NULL, 0, NULL},
};

/* A heap type made from this spec at import (the limited API has no static types). */
static PyType_Slot pending_slots[] = {
    {Py_tp_dealloc, (void *)pending_dealloc},
    {Py_tp_methods, pending_methods},
    {0, NULL},
};
static PyType_Spec pending_spec = {"wren_tui.journal._lines.Pending", sizeof(Pending), 0, Py_TPFLAGS_DEFAULT,
                                   pending_slots};
static PyTypeObject *PendingType;
static PyType_Slot reading_slots[] = {
    {Py_tp_dealloc, (void *)pending_dealloc},
    {Py_tp_methods, reading_methods},
    {0, NULL},
};
static PyType_Spec reading_spec = {"wren_tui.journal._lines.Reading", sizeof(Pending), 0, Py_TPFLAGS_DEFAULT,
                                   reading_slots};
static PyTypeObject *ReadingType;

/* The thread begun, or (none to be had) its work done here with the GIL let go. */
static void pending_begin(Pending *p) {
    if (pthread_create(&p->thread, NULL, pending_run, p) != 0) {
        Py_BEGIN_ALLOW_THREADS
        pending_run(p);
        Py_END_ALLOW_THREADS
    } else {
        p->running = 1;
    }
}

static PyObject *check_start(PyObject *self, PyObject *args) {
    Pending *p = PyObject_New(Pending, PendingType);
    if (p == NULL) return NULL;
    p->view.obj = NULL, p->ends = NULL, p->running = 0, p->count = p->pos = 0, p->data = NULL, p->error = 0;
    if (!PyArg_ParseTuple(args, "y*L", &p->view, &p->base) || (p->ends = new_ends(p->view.len)) == NULL) {
        Py_DECREF(p);
        return NULL;
    }
    pending_begin(p);
    return (PyObject *)p;
}

static PyObject *read_start(PyObject *self, PyObject *args) {
    int fd;
    long long offset;
    Py_ssize_t size;
    if (!PyArg_ParseTuple(args, "iLn", &fd, &offset, &size)) return NULL;
    if (offset < 0 || size < 1) {
        PyErr_SetString(PyExc_ValueError, "read_start: offset must be >= 0 and size >= 1");
        return NULL;
    }
    Pending *p = PyObject_New(Pending, ReadingType);
    if (p == NULL) return NULL;
    p->view.obj = NULL, p->ends = NULL, p->running = 0, p->count = p->pos = 0, p->error = 0, p->got = p->cut = 0;
    p->fd = fd, p->base = offset, p->size = size, p->first_seq = -1;
    /* the bytes read into: made here (the GIL held), filled by the thread, seen by no one until result() */
    if ((p->data = PyBytes_FromStringAndSize(NULL, size)) == NULL || (p->ends = new_ends(size)) == NULL) {
        Py_DECREF(p);
        return NULL;
    }
    p->into = (unsigned char *)PyBytes_AsString(p->data);
    pending_begin(p);
    return (PyObject *)p;
}
#define HAVE_CHECK_START 1
#endif

/* scan_calls: the line check, plus what a fork needs to follow tool calls without decoding every line. */
static const char SEQ_HEAD[] = "{\"seq\":", TS_HEAD[] = ",\"ts\":\"", TYPE_HEAD[] = ",\"type\":\"";
static const char TOOL_HEAD[] = "message\",\"message\":{\"role\":\"tool\",\"content\":\"";
static const char CALL_KEY[] = "\"toolCall", ANSWER_KEY[] = ",\"toolCallId\":\"";

/* Where the line's type begins, when it starts {"seq":SEQ,"ts":"TS","type":" with the seq expected
 * (written as the writer writes it) and a ts that is not empty and has no escape; else NULL. */
static const unsigned char *head_ok(const unsigned char *line, const unsigned char *end, long long seq) {
    const unsigned char *p = line;
    if (end - p < 8 || memcmp(p, SEQ_HEAD, 7) != 0 || p[7] == '0') return NULL;
    p += 7;
    long long value = 0;
    for (int digits = 0; p < end && *p >= '0' && *p <= '9'; p++)
        if (++digits > 18) return NULL;
        else value = value * 10 + (*p - '0');
    if (value != seq) return NULL;
    if (end - p < 8 || memcmp(p, TS_HEAD, 7) != 0 || p[7] == '"') return NULL;
    p += 7;
    while (p < end && *p != '"')
        if (*p++ == '\\') return NULL;
    if (end - p < 10 || memcmp(p + 1, TYPE_HEAD, 9) != 0) return NULL;
    return p + 10;
}

#ifdef HAVE_CLMUL
/* find_key, 32 places at a time; where it stops, the rest is find_key's. */
__attribute__((target("avx2"))) static const unsigned char *find_key_avx2(const unsigned char *p,
                                                                           const unsigned char *end,
                                                                           const unsigned char **found) {
    const __m256i quote = _mm256_set1_epi8('"'), c = _mm256_set1_epi8('C'), l = _mm256_set1_epi8('l');
    while (end - p >= 32 + 9) {
        unsigned m = (unsigned)_mm256_movemask_epi8(_mm256_and_si256(
            _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)p), quote),
                             _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(p + 5)), c)),
            _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(p + 8)), l)));
        while (m) {
            const unsigned char *at = p + __builtin_ctz(m);
            if (memcmp(at, CALL_KEY, 9) == 0) {
                *found = at;
                return p;
            }
            m &= m - 1;
        }
        p += 32;
    }
    return p;
}
#endif

/* The first "toolCall in [p, end), or NULL: bytes 0, 5 and 8 of it compared 16 places at a time. */
static const unsigned char *find_key(const unsigned char *p, const unsigned char *end) {
#ifdef HAVE_CLMUL
    if (use_avx2) {
        const unsigned char *found = NULL;
        p = find_key_avx2(p, end, &found);
        if (found != NULL) return found;
    }
#endif
#ifdef __SSE2__
    const __m128i quote = _mm_set1_epi8('"'), c = _mm_set1_epi8('C'), l = _mm_set1_epi8('l');
    while (end - p >= 16 + 9) {
        int m = _mm_movemask_epi8(
            _mm_and_si128(_mm_and_si128(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)p), quote),
                                        _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + 5)), c)),
                          _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + 8)), l)));
        while (m) {
            const unsigned char *at = p + __builtin_ctz((unsigned)m);
            if (memcmp(at, CALL_KEY, 9) == 0) return at;
            m &= m - 1;
        }
        p += 16;
    }
#endif
    /* The rest (all of it where there is no SSE2, e.g. arm64): memchr for the key's C, which is rarer in a
     * journal line than its quote, then the whole key compared. memmem would do, but it is a GNU/BSD
     * extension that Windows' C libraries lack. */
    for (const unsigned char *c = p + 5; end - c >= 4;) {
        c = memchr(c, 'C', (size_t)(end - c - 3));
        if (c == NULL) break;
        if (memcmp(c - 5, CALL_KEY, 9) == 0) return c - 5;
        c++;
    }
    return NULL;
}

#ifdef __SSE2__
/* Whether [p, end) (the rest of a checked line, which ends in its CRC suffix) holds none of the bytes
 * "seq", "ts" and \u: then no key there is seq or ts, however written (an escape other than \u makes
 * none of the letters s, e, q, t), for a key's bytes are its name between quotes. 0 at any of them: a
 * doubt. None of them starts in the suffix ,"crc":"xxxxxxxx"} or runs into it (none holds a comma), so
 * the bytes are taken 32 or 16 at a time up to the end and one by one only before the suffix. */
#ifdef HAVE_CLMUL
/* no_seq_or_ts_key's loop, 32 bytes at a time: the same matches, where the CPU has AVX2. */
__attribute__((target("avx2"))) static const unsigned char *no_key_avx2(const unsigned char *p, const unsigned char *end) {
    const __m256i quote = _mm256_set1_epi8('"'), s = _mm256_set1_epi8('s'), t = _mm256_set1_epi8('t'),
                  e = _mm256_set1_epi8('e'), q = _mm256_set1_epi8('q'), slash = _mm256_set1_epi8('\\'),
                  u = _mm256_set1_epi8('u');
    while (end - p >= 36) { /* a match starting at any of p .. p + 31 ends by p + 36 */
        __m256i v0 = _mm256_loadu_si256((const __m256i *)p), v1 = _mm256_loadu_si256((const __m256i *)(p + 1));
        __m256i v2 = _mm256_loadu_si256((const __m256i *)(p + 2)), v3 = _mm256_loadu_si256((const __m256i *)(p + 3));
        __m256i v4 = _mm256_loadu_si256((const __m256i *)(p + 4));
        __m256i opened = _mm256_cmpeq_epi8(v0, quote), closed3 = _mm256_cmpeq_epi8(v3, quote);
        __m256i ts = _mm256_and_si256(_mm256_and_si256(opened, _mm256_cmpeq_epi8(v1, t)),
                                      _mm256_and_si256(_mm256_cmpeq_epi8(v2, s), closed3));
        __m256i seq = _mm256_and_si256(
            _mm256_and_si256(_mm256_and_si256(opened, _mm256_cmpeq_epi8(v1, s)), _mm256_cmpeq_epi8(v2, e)),
            _mm256_and_si256(_mm256_cmpeq_epi8(v3, q), _mm256_cmpeq_epi8(v4, quote)));
        __m256i escape = _mm256_and_si256(_mm256_cmpeq_epi8(v0, slash), _mm256_cmpeq_epi8(v1, u));
        if (_mm256_movemask_epi8(_mm256_or_si256(_mm256_or_si256(ts, seq), escape))) return NULL;
        p += 32;
    }
    return p;
}
#endif

static int no_seq_or_ts_key(const unsigned char *p, const unsigned char *end) {
#ifdef HAVE_CLMUL
    if (use_avx2 && (p = no_key_avx2(p, end)) == NULL) return 0;
#endif
    const __m128i quote = _mm_set1_epi8('"'), s = _mm_set1_epi8('s'), t = _mm_set1_epi8('t'), e = _mm_set1_epi8('e'),
                  q = _mm_set1_epi8('q'), slash = _mm_set1_epi8('\\'), u = _mm_set1_epi8('u');
    while (end - p >= 20) { /* a match starting at any of p .. p + 15 ends by p + 20 */
        __m128i v0 = _mm_loadu_si128((const __m128i *)p), v1 = _mm_loadu_si128((const __m128i *)(p + 1));
        __m128i v2 = _mm_loadu_si128((const __m128i *)(p + 2)), v3 = _mm_loadu_si128((const __m128i *)(p + 3));
        __m128i v4 = _mm_loadu_si128((const __m128i *)(p + 4));
        __m128i opened = _mm_cmpeq_epi8(v0, quote), closed3 = _mm_cmpeq_epi8(v3, quote);
        __m128i ts = _mm_and_si128(_mm_and_si128(opened, _mm_cmpeq_epi8(v1, t)),
                                   _mm_and_si128(_mm_cmpeq_epi8(v2, s), closed3));
        __m128i seq = _mm_and_si128(_mm_and_si128(_mm_and_si128(opened, _mm_cmpeq_epi8(v1, s)), _mm_cmpeq_epi8(v2, e)),
                                    _mm_and_si128(_mm_cmpeq_epi8(v3, q), _mm_cmpeq_epi8(v4, quote)));
        __m128i escape = _mm_and_si128(_mm_cmpeq_epi8(v0, slash), _mm_cmpeq_epi8(v1, u));
        if (_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(ts, seq), escape))) return 0;
        p += 16;
    }
    for (; p < end - SUFFIX_LEN; p++) { /* the last bytes are the line's CRC suffix: none of them starts there */
        if (*p == '\\' && end - p >= 2 && p[1] == 'u') return 0;
        if (*p == '"' && end - p >= 4 && memcmp(p, "\"ts\"", 4) == 0) return 0;
        if (*p == '"' && end - p >= 5 && memcmp(p, "\"seq\"", 5) == 0) return 0;
    }
    return 1;
}

/* Whether line i of a run (from line to its newline nl) has its seq and ts plain to see, its seq
 * following the one before: it starts {"seq":SEQ,"ts":"TS","type":" as the writer starts a line
 * (head_ok), with SEQ *first + i (line 0 sets *first), and holds no other "seq" or "ts" key, nor any
 * \u (see above). Decoded, each such line then has that seq and that ts, which is not empty: what
 * follows() would check. 0 at any doubt, and Python's follows() looks. Only with SSE2: without it the
 * scan costs more than it saves. */
static int seq_follows(const unsigned char *line, const unsigned char *nl, Py_ssize_t i, long long *first) {
    if (i == 0) {
        if (nl - line < 9 || memcmp(line, SEQ_HEAD, 7) != 0) return 0;
        long long value = 0;
        for (const unsigned char *d = line + 7; d < nl && *d >= '0' && *d <= '9'; d++) {
            if (d - line >= 7 + 18) return 0;
            value = value * 10 + (*d - '0');
        }
        *first = value;
    }
    const unsigned char *type = head_ok(line, nl, *first + i);
    return type != NULL && no_seq_or_ts_key(type, nl);
}
#else
static int seq_follows(const unsigned char *line, const unsigned char *nl, Py_ssize_t i, long long *first) {
    return 0; /* without SSE2 the scan would cost more than follows() saves */
}
#endif

/* For a tool message whose only "toolCall.. key is its last member, toolCallId, a plain id: its span. */
static int answer_span(const unsigned char *type, const unsigned char *line, Py_ssize_t len, const unsigned char *key,
                       Py_ssize_t *a, Py_ssize_t *b) {
    const unsigned char *end = line + len - SUFFIX_LEN; /* just past the message's closing brace */
    Py_ssize_t head = (Py_ssize_t)sizeof TOOL_HEAD - 1;
    if (end - type < head || memcmp(type, TOOL_HEAD, (size_t)head) != 0) return 0;
    if (end[-1] != '}' || end[-2] != '"') return 0;
    const unsigned char *q = end - 3; /* the id's last byte */
    while (q > key && *q != '"') {
        if (*q == '\\') return 0;
        q--;
    }
    /* q is the id's opening quote; the key found first must be the one just before it */
    if (q - key != 13 || memcmp(key - 1, ANSWER_KEY, 15) != 0 || q + 1 >= end - 2) return 0;
    *a = q + 1 - line, *b = end - 2 - line;
    return 1;
}

/* The end of the JSON string whose opening quote is at p (just past its closing quote), or NULL. */
static const unsigned char *skip_string(const unsigned char *p, const unsigned char *end) {
    for (p++; p < end; p++) {
        if (*p == '"') return p + 1;
        if (*p == '\\') p++;
    }
    return NULL;
}

/* For a message whose first "toolCall.. key is a toolCalls list that ends the message, each
 * {"id":"ID","name":...,"args":...} with a plain id: the ids' spans, appended to spans as pairs.
 * How many, or -1 when the line is not that shape (Python decodes it). */
static Py_ssize_t ask_spans(const unsigned char *line, Py_ssize_t len, const unsigned char *key, int64_t *spans,
                            Py_ssize_t room) {
    static const char LIST[] = "\"toolCalls\":[", ID[] = "{\"id\":\"", NAME[] = ",\"name\":", ARGS[] = ",\"args\":";
    const unsigned char *end = line + len - SUFFIX_LEN - 1, *p = key + 13; /* end: the message's closing brace */
    if (end - key < 14 || memcmp(key, LIST, 13) != 0 || *end != '}' || end[-1] != ']') return -1;
    Py_ssize_t n = 0;
    while (p < end - 1) {
        if (n > 0 && *p++ != ',') return -1;
        if (end - p < 7 || memcmp(p, ID, 7) != 0) return -1;
        const unsigned char *id = p + 6, *q = id + 1;
        while (q < end && *q != '"' && *q != '\\') q++;
        if (q >= end || *q != '"' || q == id + 1 || n >= room) return -1;
        spans[2 * n] = id + 1 - line, spans[2 * n + 1] = q - line, n++;
        p = q + 1;
        if (end - p < 8 || memcmp(p, NAME, 8) != 0 || p[8] != '"' || !(p = skip_string(p + 8, end))) return -1;
        if (end - p < 8 || memcmp(p, ARGS, 8) != 0 || p[8] != '"' || !(p = skip_string(p + 8, end))) return -1;
        if (p >= end || *p++ != '}') return -1;
    }
    return p == end - 1 && n > 0 ? n : -1;
}

static PyObject *scan_calls(PyObject *self, PyObject *args) {
    Py_buffer view;
    long long prev_seq, stop_seq;
    if (!PyArg_ParseTuple(args, "y*LL", &view, &prev_seq, &stop_seq)) return NULL;
    const unsigned char *buf = (const unsigned char *)view.buf;
    Py_ssize_t size = view.len, pos = 0, used = 0, room = 0, items = 0;
    long long seq = prev_seq;
    int reached = 0, failed = 0;
    int64_t *marks = NULL;
    Py_BEGIN_ALLOW_THREADS
    while (pos < size && seq < stop_seq) {
        const unsigned char *line = buf + pos, *nl = find_stop(line, buf + size);
        if (nl == NULL || *nl != '\n') break;
        Py_ssize_t len = nl - line;
        if (!line_ok(line, len)) break;
        const unsigned char *type = head_ok(line, nl, seq + 1);
        if (type == NULL) break;
        /* A mark: kind 0 (decode the line), 1 (a tool message answering one call) or 2 (asking for calls). */
        int64_t kind = -1, a = pos, b = pos + len, asks[2 * 16];
        Py_ssize_t asked = 0;
        const unsigned char *key = nl - type > 8 && memcmp(type, "message\"", 8) == 0 ? find_key(type, nl) : NULL;
        if (seq + 1 == stop_seq) {
            kind = 0, reached = 1;
        } else if (key != NULL) {
            Py_ssize_t x, y;
            if (answer_span(type, line, len, key, &x, &y)) kind = 1, a = pos + x, b = pos + y;
            else if ((asked = ask_spans(line, len, key, asks, 16)) > 0) kind = 2;
            else kind = 0;
        }
        if (kind >= 0) {
            Py_ssize_t need = kind == 2 ? 1 + 2 * asked : 3;
            if (used + need > room) {
                room = room ? room * 2 + need : 3 * 1024;
                int64_t *grown = realloc(marks, (size_t)room * sizeof(int64_t));
                if (grown == NULL) {
                    failed = 1;
                    break;
                }
                marks = grown;
            }
            if (kind == 2) {
                marks[used++] = -asked; /* 2: a negative count, then that many spans */
                for (Py_ssize_t i = 0; i < 2 * asked; i++) marks[used++] = pos + asks[i];
            } else {
                marks[used++] = kind, marks[used++] = a, marks[used++] = b;
            }
            items++;
        }
        pos += len + 1;
        seq++;
    }
    Py_END_ALLOW_THREADS
    PyObject *out = NULL, *list = failed ? NULL : PyList_New(items), *lines = NULL;
    Py_ssize_t joined = 0;
    for (Py_ssize_t i = 0; i < used; i += marks[i] < 0 ? 1 - 2 * marks[i] : 3)
        if (marks[i] == 0) joined += marks[i + 2] - marks[i + 1] + 1;
    if (list != NULL) lines = PyBytes_FromStringAndSize(NULL, joined);
    char *to = lines == NULL ? NULL : PyBytes_AsString(lines);
    for (Py_ssize_t i = 0, k = 0; lines != NULL && i < used; k++) {
        int64_t *m = marks + i;
        PyObject *item = Py_None;
        if (m[0] < 0) { /* the ids a message asks for, as a tuple */
            Py_ssize_t count = (Py_ssize_t)-m[0];
            item = PyTuple_New(count);
            for (Py_ssize_t j = 0; item != NULL && j < count; j++) {
                PyObject *id = PyUnicode_DecodeUTF8((const char *)buf + m[1 + 2 * j], m[2 + 2 * j] - m[1 + 2 * j], NULL);
                if (id == NULL || PyTuple_SetItem(item, j, id) < 0) Py_CLEAR(item); /* SetItem takes id */
            }
            i += 1 + 2 * count;
        } else {
            if (m[0] == 1) {
                item = PyUnicode_DecodeUTF8((const char *)buf + m[1], m[2] - m[1], NULL);
            } else {
                Py_INCREF(Py_None);
                memcpy(to, buf + m[1], (size_t)(m[2] - m[1] + 1)); /* the line with its newline */
                to += m[2] - m[1] + 1;
            }
            i += 3;
        }
        if (item == NULL || PyList_SetItem(list, k, item) < 0) Py_CLEAR(lines); /* SetItem takes item */
    }
    free(marks);
    if (failed) PyErr_NoMemory();
    else if (lines != NULL) out = Py_BuildValue("(nLNNO)", pos, seq, list, lines, reached ? Py_True : Py_False);
    else Py_XDECREF(list);
    PyBuffer_Release(&view);
    return out;
}

/* follows(events, first) -> bool: each event's seq is first, first + 1, ... and its ts is a non-empty str.
 *
 * What check_run asks of every decoded event, without a Python call per event: each type's seq and ts
 * descriptors are looked up once (msgspec keeps a Struct's fields in member slots, whose descriptors
 * are data descriptors) and each event's values are got through them, as attribute access would get
 * them but without looking the names up again. Any doubt (a type with its own attribute access, a
 * name that is no data descriptor, a slot unset, a seq that is not an int) answers False, and Python
 * asks again its own way. Only the limited API: one build serves every Python from 3.11. */
static PyObject *follows(PyObject *self, PyObject *args) {
    PyObject *events, *first_obj, *seq_name = NULL, *ts_name = NULL;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &events, &PyLong_Type, &first_obj)) return NULL;
    int overflow;
    long long first = PyLong_AsLongLongAndOverflow(first_obj, &overflow);
    if (first == -1 && PyErr_Occurred()) return NULL;
    if (overflow) Py_RETURN_FALSE;
    seq_name = PyUnicode_InternFromString("seq");
    ts_name = PyUnicode_InternFromString("ts");
    if (seq_name == NULL || ts_name == NULL) {
        Py_XDECREF(seq_name), Py_XDECREF(ts_name);
        return NULL;
    }
    enum { TYPES = 16 };
    PyTypeObject *types[TYPES];
    PyObject *seq_descr[TYPES], *ts_descr[TYPES]; /* held until the end */
    descrgetfunc seq_get[TYPES], ts_get[TYPES];
    int known = 0, ok = 1;
    Py_ssize_t n = PyList_Size(events);
    for (Py_ssize_t i = 0; ok && i < n; i++) {
        PyObject *event = PyList_GetItem(events, i); /* borrowed */
        PyTypeObject *type = Py_TYPE(event);
        int k = 0;
        while (k < known && types[k] != type) k++;
        if (k == known) {
            if (known == TYPES || PyType_GetSlot(type, Py_tp_getattro) != (void *)PyObject_GenericGetAttr) {
                ok = 0;
                break;
            }
            PyObject *sd = PyObject_GetAttr((PyObject *)type, seq_name), *td = PyObject_GetAttr((PyObject *)type, ts_name);
            descrgetfunc sg = sd ? (descrgetfunc)PyType_GetSlot(Py_TYPE(sd), Py_tp_descr_get) : NULL;
            descrgetfunc tg = td ? (descrgetfunc)PyType_GetSlot(Py_TYPE(td), Py_tp_descr_get) : NULL;
            /* a data descriptor (it has a setter) comes before an instance's __dict__, as attribute access has it */
            if (sg == NULL || tg == NULL || PyType_GetSlot(Py_TYPE(sd), Py_tp_descr_set) == NULL ||
                PyType_GetSlot(Py_TYPE(td), Py_tp_descr_set) == NULL) {
                PyErr_Clear();
                Py_XDECREF(sd), Py_XDECREF(td);
                ok = 0;
                break;
            }
            types[k] = type, seq_descr[k] = sd, ts_descr[k] = td, seq_get[k] = sg, ts_get[k] = tg, known++;
        }
        PyObject *seq = seq_get[k](seq_descr[k], event, (PyObject *)type);
        PyObject *ts = seq == NULL ? NULL : ts_get[k](ts_descr[k], event, (PyObject *)type);
        if (seq == NULL || ts == NULL || !PyLong_CheckExact(seq) || !PyUnicode_CheckExact(ts)) {
            PyErr_Clear(); /* an unset slot: AttributeError, which is a doubt */
            Py_XDECREF(seq), Py_XDECREF(ts);
            ok = 0;
            break;
        }
        long long value = PyLong_AsLongLongAndOverflow(seq, &overflow);
        /* value - first == i, in unsigned arithmetic: it cannot overflow */
        ok = !overflow && value >= first && (unsigned long long)value - (unsigned long long)first == (unsigned long long)i &&
             PyUnicode_GetLength(ts) > 0;
        Py_DECREF(seq), Py_DECREF(ts);
    }
    for (int k = 0; k < known; k++) Py_DECREF(seq_descr[k]), Py_DECREF(ts_descr[k]);
    Py_DECREF(seq_name), Py_DECREF(ts_name);
    return PyBool_FromLong(ok);
}

static PyObject *crc32_py(PyObject *self, PyObject *args) {
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "y*", &view)) return NULL;
    uint32_t c;
    Py_BEGIN_ALLOW_THREADS
    c = crc32_of((const unsigned char *)view.buf, view.len);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    return PyLong_FromUnsignedLong(c);
}

static PyObject *make_line(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "make_line(seq, ts, body) takes 3 arguments");
        return NULL;
    }
    long long seq = PyLong_AsLongLong(args[0]);
    if (seq == -1 && PyErr_Occurred()) return NULL;
    if (!PyBytes_Check(args[1]) || !PyBytes_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "make_line: ts and body must be bytes");
        return NULL;
    }
    char *ts, *body;
    Py_ssize_t ts_len, body_len;
    if (PyBytes_AsStringAndSize(args[1], &ts, &ts_len) < 0 || PyBytes_AsStringAndSize(args[2], &body, &body_len) < 0)
        return NULL;
    if (body_len < 2 || body[0] != '{' || body[body_len - 1] != '}') {
        PyErr_SetString(PyExc_ValueError, "make_line: body must be a JSON object");
        return NULL;
    }
    char digits[24];
    int digits_len = snprintf(digits, sizeof digits, "%lld", seq);
    static const char SEQ[] = "{\"seq\":", TS[] = ",\"ts\":\"";
    Py_ssize_t head_len = 7 + digits_len + 7 + ts_len + 2, inner_len = body_len - 2;
    PyObject *out = PyBytes_FromStringAndSize(NULL, head_len + inner_len + SUFFIX_LEN + 1);
    if (out == NULL) return NULL;
    unsigned char *start = (unsigned char *)PyBytes_AsString(out), *p = start;
    memcpy(p, SEQ, 7), p += 7;
    memcpy(p, digits, (size_t)digits_len), p += digits_len;
    memcpy(p, TS, 7), p += 7;
    memcpy(p, ts, (size_t)ts_len), p += ts_len;
    *p++ = '"', *p++ = ',';
    memcpy(p, body + 1, (size_t)inner_len), p += inner_len;
    uint32_t crc = crc32_of(start, p - start);
    memcpy(p, CRC_MARK, 8), p += 8;
    for (int shift = 28; shift >= 0; shift -= 4) *p++ = "0123456789abcdef"[(crc >> shift) & 0xF];
    *p++ = '"', *p++ = '}', *p++ = '\n';
    return out;
}

static PyMethodDef methods[] = {
    {"check_lines", check_lines, METH_VARARGS,
     "check_lines(buf, base) -> (count, ends, whole): the leading lines that are ours and clean, where each ends, "
     "and whether they are all of buf."},
    {"make_line", (PyCFunction)(void (*)(void))make_line, METH_FASTCALL,
     "make_line(seq, ts, body) -> bytes: a journal line, as writer.py builds it in Python."},
    {"scan_calls", scan_calls, METH_VARARGS,
     "scan_calls(buf, prev_seq, stop_seq) -> (end, seq, marks, lines, reached): the lines checked up to stop_seq's, "
     "the ids tool messages answer, the ids messages ask for, and the other lines that touch tool calls."},
    {"follows", follows, METH_VARARGS,
     "follows(events, first) -> bool: each event's seq is first, first + 1, ... and its ts is not empty."},
#ifdef HAVE_CHECK_START
    {"check_start", check_start, METH_VARARGS,
     "check_start(buf, base) -> Pending: check_lines begun in a thread of its own; .result() gives its answer."},
    {"read_start", read_start, METH_VARARGS,
     "read_start(fd, offset, size) -> Reading: a chunk read and its whole lines checked in a thread of its own; "
     ".result() gives (data, got, cut, count, ends, whole, first_seq)."},
#endif
    {"crc32", crc32_py, METH_VARARGS, "crc32(buf) -> int: the CRC-32 check_lines uses (zlib's), for tests."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_lines", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__lines(void) {
    crc_init();
    hex_init();
#ifdef HAVE_CLMUL
    __builtin_cpu_init();
    use_avx2 = __builtin_cpu_supports("avx2");
#endif
#ifdef HAVE_CHECK_START
    if ((PendingType = (PyTypeObject *)PyType_FromSpec(&pending_spec)) == NULL) return NULL;
    if ((ReadingType = (PyTypeObject *)PyType_FromSpec(&reading_spec)) == NULL) return NULL;
#endif
    return PyModule_Create(&module);
}
