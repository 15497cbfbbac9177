/* Search's raw pass over a Wren journal in C: which lines are good, what kind each is, and which can match.
 *
 * Optional: setup builds it when a C compiler is there; without it, rawpass.py (python_scan) does the same in Python
 * (much slower, the same answers; tests compare the two). It releases the GIL while it works.
 *
 * scan(buf, base, prev_seq, needle, fold, escapes, extras) -> (count, consumed, ends, kinds, hits)
 *   buf       a bytes-like run of lines from a line's start; a last line without its newline is left
 *   base      the file offset of buf[0]
 *   prev_seq  the seq of the line before buf (0 at the file's start)
 *   needle    bytes, or None: a line that can match holds these bytes (ASCII case ignored when fold);
 *             None makes every line a candidate
 *   escapes   also a candidate: a line holding \u00 followed by 2-7 (an escape that may stand for a
 *             printable ASCII character) or \/ (JSON's other way to write /)
 *   extras    a tuple of bytes: a line holding any of them (ASCII case ignored) is a candidate too
 * The scan vouches for each line from the start, and stops before the first it cannot vouch for:
 * whole (its newline is there), no NUL and no CR byte, ending in ,"crc":"xxxxxxxx"} with 8 lowercase
 * hex digits equal to the CRC-32 (zlib's) of the bytes before ,"crc", and starting
 * {"seq":N,"ts":"T","type":"K" with N = prev_seq + 1 (no leading zero) and T, K not empty and free of
 * backslashes. Python decides about a line the scan does not vouch for, as the reader would.
 *   count     lines vouched for; their seqs are prev_seq + 1 .. prev_seq + count
 *   consumed  their bytes
 *   ends      base + the offset just past each one's newline, as native 8-byte integers
 *   kinds     one byte each: 1 delta, 2 a message whose role comes first and is assistant, 3 run_start, 0 other
 *   hits      the indexes (native 4-byte integers) of the candidates among them, in order
 *
 * find(buf, needle, fold, escapes, extras) -> int
 *   where in buf (from a line's start; any bytes, no line vouched for) the first of what makes a line a
 *   candidate starts (the needle, an escape, an extra), or -1: another agent's file is looked at whole
 * plain(buf) -> (lines, doubt)
 *   the newlines in buf, and where the first doubt is that its lines do not read as their bytes say (see
 *   "another agent's file, skimmed"), or -1
 * pairs(text) -> str
 *   each two adjacent words of text, lowercased, joined by _, separated by spaces (a word: a run of ASCII
 *   letters and digits; every other character separates): "Zero, because the" -> "zero_because because_the";
 *   what the index's word-pair table holds of a text (index.py's python_pairs is the contract)
 * ids(text) -> bytes | None
 *   the ids of SQLite's group_concat ("12,13,40") as native 8-byte integers, or None when they are not
 *   each higher than the one before or the text is not such a list (index.py's `_ids` then reads it in Python)
 *
 * The CRC uses carry-less multiplication (PCLMULQDQ) to fold 16-byte blocks when the CPU has it,
 * else eight tables (slicing-by-8); both give zlib's CRC-32.
 *
 * Where the time goes (1 GB of generated journals, 2.3M lines): the CRC about half, finding what can
 * match a quarter (with AVX2 one pass for the needle, the escapes and the extras), the line ends and
 * heads the rest. Tried and left out: VPCLMULQDQ on 32-byte registers (faster on one long buffer,
 * slower on lines of a few hundred bytes here), splitting a buffer across two threads (slower with the
 * machine's other work on the second core), finding NUL and CR for the whole buffer first.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define WREN_X86 1
#include <emmintrin.h>
#include <immintrin.h>
#include <wmmintrin.h>
#endif

/* --- CRC-32: ../_crc32.h ------------------------------------------------------------------- */

#include "../_crc32.h"

#ifdef WREN_X86
static int have_avx2 = 0;
#endif

#define MAX_PATTERNS 16

/* --- finding bytes ------------------------------------------------------------------------- */

static unsigned char lower[256];

/* How common a byte is in a journal's lines, roughly (higher: more common); the rarest byte of a
 * needle is the one looked for first. */
static unsigned char rank[256];

static void tables_init(void) {
    for (int i = 0; i < 256; i++) {
        lower[i] = (unsigned char)((i >= 'A' && i <= 'Z') ? i + 32 : i);
        rank[i] = i >= 0x80 ? 40 : 60;
    }
    /* Bytes by how often they come in coding agents' session logs (the recordings in tests/fixtures), most first. */
    const char *common = "\"et snaoir:dlc,pum0-hf21g_yb3k4.569\\v{}8w7/x";
    for (int k = 0; common[k]; k++) rank[(unsigned char)common[k]] = (unsigned char)(250 - k * 4);
    for (int c = 'A'; c <= 'Z'; c++) rank[c] = (unsigned char)(rank[c + 32] / 2 + 20);
}

/* The first byte in [p, end) equal to a or b. */
static const unsigned char *find_either(const unsigned char *p, const unsigned char *end, unsigned char a,
                                        unsigned char b) {
    if (a == b) return memchr(p, a, (size_t)(end - p));
#ifdef WREN_X86
    const __m128i va = _mm_set1_epi8((char)a), vb = _mm_set1_epi8((char)b);
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)p);
        int m = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, va), _mm_cmpeq_epi8(v, vb)));
        if (m) return p + __builtin_ctz((unsigned)m);
        p += 16;
    }
#endif
    for (; p < end; p++)
        if (*p == a || *p == b) return p;
    return NULL;
}

typedef struct {
    const unsigned char *bytes;
    Py_ssize_t len;
    int fold;
    Py_ssize_t rare; /* the index of its rarest byte */
    unsigned char a, b; /* the values that byte may have in the text */
    Py_ssize_t next; /* offset in buf of its next occurrence at or after where the scan is, or -1 */
} Pattern;

static void pattern_init(Pattern *pat, const unsigned char *bytes, Py_ssize_t len, int fold) {
    pat->bytes = bytes;
    pat->len = len;
    pat->fold = fold;
    pat->rare = 0;
    for (Py_ssize_t i = 1; i < len; i++) {
        unsigned r = rank[bytes[i]], best = rank[bytes[pat->rare]];
        if (r < best) pat->rare = i;
    }
    unsigned char c = bytes[pat->rare];
    pat->a = fold ? lower[c] : c;
    pat->b = (fold && pat->a >= 'a' && pat->a <= 'z') ? (unsigned char)(pat->a - 32) : pat->a;
    pat->next = 0;
}

static int same_at(const Pattern *pat, const unsigned char *at) {
    if (!pat->fold) return memcmp(at, pat->bytes, (size_t)pat->len) == 0;
    for (Py_ssize_t i = 0; i < pat->len; i++)
        if (lower[at[i]] != lower[pat->bytes[i]]) return 0;
    return 1;
}

/* The offset of the first occurrence of `pat` starting at or after `from` in buf[0:size], or -1. */
static Py_ssize_t pattern_find_plain(const Pattern *pat, const unsigned char *buf, Py_ssize_t size, Py_ssize_t from) {
    const unsigned char *end = buf + size;
    const unsigned char *p = buf + from + pat->rare;
    while (p < end) {
        p = find_either(p, end, pat->a, pat->b);
        if (p == NULL) return -1;
        const unsigned char *start = p - pat->rare;
        if (start + pat->len <= end && same_at(pat, start)) return start - buf;
        p++;
    }
    return -1;
}

#ifdef WREN_X86 /* the AVX2 finders' only */
/* A backslash at p starts an escape unless an odd number of backslashes stand just before it (down to `floor`). */
static int starts_escape(const unsigned char *p, const unsigned char *floor) {
    int before = 0;
    while (p - before > floor && p[-before - 1] == '\\') before++;
    return (before & 1) == 0;
}
#endif

/* Whether the escape at p (a backslash) may stand for a printable ASCII character: \u0020-\u007f or \/. */
static int ascii_escape(const unsigned char *p, const unsigned char *end) {
    if (p + 1 < end && p[1] == '/') return 1;
    return p + 4 < end && p[1] == 'u' && p[2] == '0' && p[3] == '0' && p[4] >= '2' && p[4] <= '7';
}

/* The offset of the first such escape at or after `from` (a line's start), or -1. */
static Py_ssize_t escape_find_plain(const unsigned char *buf, Py_ssize_t size, Py_ssize_t from) {
    const unsigned char *end = buf + size, *p = buf + from;
    while (p < end) {
        p = memchr(p, '\\', (size_t)(end - p));
        if (p == NULL || p + 1 >= end) return -1;
        if (p[1] == '\\') {
            p += 2; /* an escaped backslash: the next one starts a new escape */
            continue;
        }
        if (ascii_escape(p, end)) return p - buf;
        p += 2;
    }
    return -1;
}

#ifdef WREN_X86
/* The same two searches, 32 bytes at a time: a pattern by its first and last bytes, then compared whole;
 * an escape by its backslash and the bytes after it, then by the backslashes before it. */
__attribute__((target("avx2"))) static Py_ssize_t pattern_find_avx2(const Pattern *pat, const unsigned char *buf,
                                                                    Py_ssize_t size, Py_ssize_t from) {
    if (pat->len < 2) return pattern_find_plain(pat, buf, size, from);
    const unsigned char *end = buf + size, *p = buf + from;
    unsigned char f = pat->bytes[0], l = pat->bytes[pat->len - 1];
    unsigned char f2 = f, l2 = l;
    if (pat->fold) {
        f = lower[f], l = lower[l];
        f2 = (f >= 'a' && f <= 'z') ? (unsigned char)(f - 32) : f;
        l2 = (l >= 'a' && l <= 'z') ? (unsigned char)(l - 32) : l;
    }
    const __m256i vf = _mm256_set1_epi8((char)f), vf2 = _mm256_set1_epi8((char)f2);
    const __m256i vl = _mm256_set1_epi8((char)l), vl2 = _mm256_set1_epi8((char)l2);
    Py_ssize_t last = pat->len - 1;
    while (end - p >= last + 32) {
        __m256i a = _mm256_loadu_si256((const __m256i *)p), b = _mm256_loadu_si256((const __m256i *)(p + last));
        __m256i first = _mm256_or_si256(_mm256_cmpeq_epi8(a, vf), _mm256_cmpeq_epi8(a, vf2));
        __m256i final = _mm256_or_si256(_mm256_cmpeq_epi8(b, vl), _mm256_cmpeq_epi8(b, vl2));
        unsigned m = (unsigned)_mm256_movemask_epi8(_mm256_and_si256(first, final));
        while (m) {
            int bit = __builtin_ctz(m);
            if (same_at(pat, p + bit)) return p + bit - buf;
            m &= m - 1;
        }
        p += 32;
    }
    return pattern_find_plain(pat, buf, size, p - buf);
}

__attribute__((target("avx2"))) static Py_ssize_t escape_find_avx2(const unsigned char *buf, Py_ssize_t size,
                                                                   Py_ssize_t from) {
    const unsigned char *end = buf + size, *p = buf + from;
    const __m256i slash = _mm256_set1_epi8('\\'), fwd = _mm256_set1_epi8('/'), u = _mm256_set1_epi8('u');
    const __m256i zero = _mm256_set1_epi8('0');
    while (end - p >= 35) {
        __m256i a0 = _mm256_loadu_si256((const __m256i *)p), a1 = _mm256_loadu_si256((const __m256i *)(p + 1));
        __m256i a2 = _mm256_loadu_si256((const __m256i *)(p + 2)), a3 = _mm256_loadu_si256((const __m256i *)(p + 3));
        __m256i uni = _mm256_and_si256(_mm256_cmpeq_epi8(a1, u),
                                       _mm256_and_si256(_mm256_cmpeq_epi8(a2, zero), _mm256_cmpeq_epi8(a3, zero)));
        __m256i hit = _mm256_and_si256(_mm256_cmpeq_epi8(a0, slash), _mm256_or_si256(uni, _mm256_cmpeq_epi8(a1, fwd)));
        unsigned m = (unsigned)_mm256_movemask_epi8(hit);
        while (m) {
            const unsigned char *at = p + __builtin_ctz(m);
            if (ascii_escape(at, end) && starts_escape(at, buf + from)) return at - buf;
            m &= m - 1;
        }
        p += 32;
    }
    /* The rest, from a place outside any escape: back to the start of a run of backslashes. */
    while (p > buf + from && p[-1] == '\\') p--;
    Py_ssize_t rest = escape_find_plain(buf, size, p - buf);
    return rest;
}
#endif

static Py_ssize_t pattern_find(const Pattern *pat, const unsigned char *buf, Py_ssize_t size, Py_ssize_t from) {
#ifdef WREN_X86
    if (have_avx2) return pattern_find_avx2(pat, buf, size, from);
#endif
    return pattern_find_plain(pat, buf, size, from);
}

static Py_ssize_t escape_find(const unsigned char *buf, Py_ssize_t size, Py_ssize_t from) {
#ifdef WREN_X86
    if (have_avx2) return escape_find_avx2(buf, size, from);
#endif
    return escape_find_plain(buf, size, from);
}

#ifdef WREN_X86
/* --- one pass for everything a line can match by ----------------------------------------------
 * The needle (by its two rarest bytes), the escapes, and the extras that start with a backslash and
 * u (a \u escape) or with a non-ASCII byte (a character's UTF-8): every 32 bytes are loaded once and
 * tested for all of them, where a pass each would read the buffer once per pattern. Each candidate
 * is then checked exactly, as the separate searches check it. */
typedef struct {
    const Pattern *needle; /* or NULL */
    Py_ssize_t o1, o2, o3; /* the needle's two rarest bytes' offsets and its last's, and their values in both cases */
    unsigned char a1, b1, a2, b2, a3, b3;
    int escapes;
    const Pattern *special[MAX_PATTERNS]; /* extras starting with \u or a byte >= 0x80 */
    int nspecial, high; /* high: how many start with a byte >= 0x80 (a character's UTF-8) */
    unsigned char lead[MAX_PATTERNS], second[MAX_PATTERNS]; /* those ones' first two bytes */
} Finder;

/* The values the needle's byte at `at` may have in the text (two when it is a letter and case is ignored). */
static void both_cases(const Pattern *needle, Py_ssize_t at, unsigned char *a, unsigned char *b) {
    unsigned char c = needle->bytes[at];
    *a = needle->fold ? lower[c] : c;
    *b = (needle->fold && *a >= 'a' && *a <= 'z') ? (unsigned char)(*a - 32) : *a;
}

static void finder_init(Finder *f, const Pattern *needle, int escapes) {
    f->needle = needle;
    f->escapes = escapes;
    f->nspecial = f->high = 0;
    f->o1 = f->o2 = f->o3 = 0;
    f->a1 = f->b1 = f->a2 = f->b2 = f->a3 = f->b3 = 0;
    if (needle == NULL) return;
    f->o1 = needle->rare;
    f->o2 = needle->len > 1 ? (needle->rare == 0 ? 1 : 0) : needle->rare;
    for (Py_ssize_t i = 0; i < needle->len; i++)
        if (i != f->o1 && rank[needle->bytes[i]] < rank[needle->bytes[f->o2]]) f->o2 = i;
    /* A third byte apart from the two: two rare bytes side by side are often a common pair (".py"). */
    f->o3 = needle->len - 1;
    if (f->o3 == f->o1 || f->o3 == f->o2) f->o3 = 0;
    if (f->o3 == f->o1 || f->o3 == f->o2) f->o3 = f->o1;
    both_cases(needle, f->o1, &f->a1, &f->b1);
    both_cases(needle, f->o2, &f->a2, &f->b2);
    both_cases(needle, f->o3, &f->a3, &f->b3);
}

/* Whether the finder takes this extra (else it gets a search of its own). */
static int finder_takes(Finder *f, const Pattern *extra) {
    const unsigned char *b = extra->bytes;
    int escape = extra->len >= 2 && b[0] == '\\' && (b[1] == 'u' || b[1] == 'U');
    if ((!escape && (b[0] < 0x80 || extra->len < 2)) || f->nspecial == MAX_PATTERNS) return 0;
    f->special[f->nspecial++] = extra;
    if (!escape) {
        f->lead[f->high] = b[0];
        f->second[f->high++] = b[1];
    }
    return 1;
}

/* Whether something the finder looks for starts at `at` (floor: the line's start, for escapes). */
static int finder_at(const Finder *f, const unsigned char *at, const unsigned char *end, const unsigned char *floor) {
    if (f->needle != NULL && end - at >= f->needle->len && same_at(f->needle, at)) return 1;
    if (f->escapes && *at == '\\' && ascii_escape(at, end) && starts_escape(at, floor)) return 1;
    for (int k = 0; k < f->nspecial; k++)
        if (end - at >= f->special[k]->len && same_at(f->special[k], at)) return 1;
    return 0;
}

/* The offset of the first thing the finder looks for at or after `from` (a line's start), or -1. */
__attribute__((target("avx2"))) static Py_ssize_t finder_find(const Finder *f, const unsigned char *buf,
                                                              Py_ssize_t size, Py_ssize_t from) {
    const unsigned char *end = buf + size, *p = buf + from, *floor = buf + from;
    const __m256i slash = _mm256_set1_epi8('\\'), u = _mm256_set1_epi8('u'), big_u = _mm256_set1_epi8('U');
    const __m256i fwd = _mm256_set1_epi8('/');
    const __m256i a1 = _mm256_set1_epi8((char)f->a1), b1 = _mm256_set1_epi8((char)f->b1);
    const __m256i a2 = _mm256_set1_epi8((char)f->a2), b2 = _mm256_set1_epi8((char)f->b2);
    const __m256i a3 = _mm256_set1_epi8((char)f->a3), b3 = _mm256_set1_epi8((char)f->b3);
    int backslash = f->escapes || f->nspecial > f->high;
    if (f->needle == NULL && !backslash && !f->high) return -1; /* nothing to look for (every line is a candidate) */
    Py_ssize_t reach = f->needle != NULL ? f->needle->len : 0;
    if (reach < 2) reach = 2;
    while (end - p >= 32 + reach) {
        unsigned m = 0;
        __m256i v = _mm256_loadu_si256((const __m256i *)p);
        if (f->needle != NULL) {
            __m256i x = _mm256_loadu_si256((const __m256i *)(p + f->o1));
            __m256i y = _mm256_loadu_si256((const __m256i *)(p + f->o2));
            __m256i hx = _mm256_or_si256(_mm256_cmpeq_epi8(x, a1), _mm256_cmpeq_epi8(x, b1));
            __m256i hy = _mm256_or_si256(_mm256_cmpeq_epi8(y, a2), _mm256_cmpeq_epi8(y, b2));
            __m256i z = _mm256_loadu_si256((const __m256i *)(p + f->o3));
            __m256i hz = _mm256_or_si256(_mm256_cmpeq_epi8(z, a3), _mm256_cmpeq_epi8(z, b3));
            m = (unsigned)_mm256_movemask_epi8(_mm256_and_si256(_mm256_and_si256(hx, hy), hz));
        }
        if (backslash) {
            __m256i w = _mm256_loadu_si256((const __m256i *)(p + 1));
            __m256i after = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(w, u), _mm256_cmpeq_epi8(w, big_u)),
                                            _mm256_cmpeq_epi8(w, fwd));
            m |= (unsigned)_mm256_movemask_epi8(_mm256_and_si256(_mm256_cmpeq_epi8(v, slash), after));
        }
        if (f->high && _mm256_movemask_epi8(v) != 0) {
            /* By a character's first two bytes: text in another script has many bytes >= 0x80, few of these pairs. */
            __m256i w = _mm256_loadu_si256((const __m256i *)(p + 1)), pairs = _mm256_setzero_si256();
            for (int k = 0; k < f->high; k++)
                pairs = _mm256_or_si256(pairs, _mm256_and_si256(_mm256_cmpeq_epi8(v, _mm256_set1_epi8((char)f->lead[k])),
                                                                 _mm256_cmpeq_epi8(w, _mm256_set1_epi8((char)f->second[k]))));
            m |= (unsigned)_mm256_movemask_epi8(pairs);
        }
        while (m) {
            const unsigned char *at = p + __builtin_ctz(m);
            if (finder_at(f, at, end, floor)) return at - buf;
            m &= m - 1;
        }
        p += 32;
    }
    for (; p < end; p++)
        if (finder_at(f, p, end, floor)) return p - buf;
    return -1;
}
#endif

/* --- lines ---------------------------------------------------------------------------------- */

static const char CRC_MARK[] = ",\"crc\":\""; /* 8 bytes */
#define SUFFIX_LEN 18                         /* ,"crc":"xxxxxxxx"} */

/* The end of the line at p (its newline), or NULL when a NUL or CR comes first or there is no newline. */
static const unsigned char *line_end_plain(const unsigned char *p, const unsigned char *end) {
#ifdef WREN_X86
    const __m128i nl = _mm_set1_epi8('\n'), nul = _mm_setzero_si128(), cr = _mm_set1_epi8('\r');
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)p);
        __m128i any = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, nl), _mm_cmpeq_epi8(v, nul)), _mm_cmpeq_epi8(v, cr));
        int m = _mm_movemask_epi8(any);
        if (m) {
            p += __builtin_ctz((unsigned)m);
            return *p == '\n' ? p : NULL;
        }
        p += 16;
    }
#endif
    for (; p < end; p++) {
        if (*p == '\n') return p;
        if (*p == '\0' || *p == '\r') return NULL;
    }
    return NULL;
}

#ifdef WREN_X86
/* The same, 32 bytes at a time. */
__attribute__((target("avx2"))) static const unsigned char *line_end_avx2(const unsigned char *p,
                                                                          const unsigned char *end) {
    const __m256i nl = _mm256_set1_epi8('\n'), nul = _mm256_setzero_si256(), cr = _mm256_set1_epi8('\r');
    while (end - p >= 32) {
        __m256i v = _mm256_loadu_si256((const __m256i *)p);
        __m256i any = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(v, nl), _mm256_cmpeq_epi8(v, nul)),
                                      _mm256_cmpeq_epi8(v, cr));
        unsigned m = (unsigned)_mm256_movemask_epi8(any);
        if (m) {
            p += __builtin_ctz(m);
            return *p == '\n' ? p : NULL;
        }
        p += 32;
    }
    return line_end_plain(p, end);
}
#endif

static const unsigned char *line_end(const unsigned char *p, const unsigned char *end) {
#ifdef WREN_X86
    if (have_avx2) return line_end_avx2(p, end);
#endif
    return line_end_plain(p, end);
}

/* A seq as its decimal digits, counted up line by line (comparing digits costs less than parsing them). */
typedef struct {
    char digits[24];
    int len;
} Seq;

static void seq_set(Seq *s, long long n) {
    s->len = snprintf(s->digits, sizeof s->digits, "%lld", n);
}

static void seq_next(Seq *s) {
    int i = s->len - 1;
    while (i >= 0 && s->digits[i] == '9') s->digits[i--] = '0';
    if (i >= 0) {
        s->digits[i]++;
        return;
    }
    memmove(s->digits + 1, s->digits, (size_t)s->len++);
    s->digits[0] = '1';
}

/* The line's kind (see the header) if it starts as a line we vouch for with seq `seq`, else -1.
 * The same rules as reading the seq's digits (1-9 then at most 17 more, equal to seq): seq's own
 * digits have no leading zero, and a longer run of digits is not followed by the ,"ts" expected. */
static int head_kind(const unsigned char *p, Py_ssize_t len, const Seq *seq) {
    static const char SEQ[] = "{\"seq\":", TS[] = ",\"ts\":\"", TYPE[] = ",\"type\":\"";
    const unsigned char *end = p + len;
    if (seq->len > 18 || len < 7 + seq->len + 7 || memcmp(p, SEQ, 7) != 0) return -1;
    p += 7;
    if (memcmp(p, seq->digits, (size_t)seq->len) != 0) return -1;
    p += seq->len;
    if (memcmp(p, TS, 7) != 0) return -1;
    p += 7;
    const unsigned char *ts = p;
    p = find_either(p, end, '"', '\\');
    if (p == NULL || p == ts || *p != '"') return -1;
    p++;
    if (end - p < 9 || memcmp(p, TYPE, 9) != 0) return -1;
    p += 9;
    const unsigned char *type = p;
    p = find_either(p, end, '"', '\\');
    if (p == NULL || p == type || *p != '"') return -1;
    Py_ssize_t type_len = p - type;
    p++;
    if (type_len == 5 && memcmp(type, "delta", 5) == 0) return 1;
    if (type_len == 9 && memcmp(type, "run_start", 9) == 0) return 3;
    static const char ASSISTANT[] = ",\"message\":{\"role\":\"assistant\"";
    if (type_len == 7 && memcmp(type, "message", 7) == 0 && end - p >= 30 && memcmp(p, ASSISTANT, 30) == 0) return 2;
    return 0;
}

/* A hex digit's value, or 0xFF: only lowercase digits are ours (Python reads a line with others). */
static unsigned char hex_of[256];

static void hex_init(void) {
    memset(hex_of, 0xFF, sizeof hex_of);
    for (int i = 0; i < 10; i++) hex_of['0' + i] = (unsigned char)i;
    for (int i = 0; i < 6; i++) hex_of['a' + i] = (unsigned char)(10 + i);
}

/* 1 when the line (without its newline) carries our suffix with its right CRC. */
static int crc_ok(const unsigned char *line, Py_ssize_t len) {
    if (len < SUFFIX_LEN + 2) return 0;
    const unsigned char *tail = line + len - SUFFIX_LEN;
    if (memcmp(tail, CRC_MARK, 8) != 0 || tail[16] != '"' || tail[17] != '}') return 0;
    uint32_t expected = 0;
    unsigned bad = 0;
    for (int k = 8; k < 16; k++) {
        unsigned v = hex_of[tail[k]];
        bad |= v;
        expected = expected << 4 | (v & 0xF);
    }
    if (bad & 0xF0) return 0;
    return crc32_of(line, (size_t)(len - SUFFIX_LEN)) == expected;
}

/* One stretch of the buffer scanned: what it is given, and what it found. */
typedef struct {
    const unsigned char *buf; /* from a line's start */
    Py_ssize_t size;
    long long base, prev_seq;
    Pattern patterns[MAX_PATTERNS];
    int npat, every, escapes;
    Py_ssize_t most; /* room in the outputs */
    int64_t *ends;
    unsigned char *kinds;
    int32_t *hits;
    Py_ssize_t count, nhits, pos;
} Job;

static void run_job(Job *job) {
    const unsigned char *buf = job->buf;
    Py_ssize_t size = job->size, count = 0, nhits = 0, pos = 0;
    Seq seq;
    seq_set(&seq, job->prev_seq + 1);
    /* Which searches the finder does in one pass (with AVX2), and which are left to their own. */
    int own[MAX_PATTERNS], escapes = job->escapes;
    for (int k = 0; k < job->npat; k++) own[k] = 1;
#ifdef WREN_X86
    Py_ssize_t next = -1; /* the finder's next candidate */
    Finder finder;
    int fused = have_avx2;
    if (fused) {
        int first = job->every ? 0 : 1;
        finder_init(&finder, first ? &job->patterns[0] : NULL, escapes);
        if (first) own[0] = 0;
        for (int k = first; k < job->npat; k++) own[k] = !finder_takes(&finder, &job->patterns[k]);
        escapes = 0;
        next = finder_find(&finder, buf, size, 0);
    }
#endif
    Py_ssize_t esc = escapes ? escape_find(buf, size, 0) : -1;
    for (int k = 0; k < job->npat; k++)
        job->patterns[k].next = own[k] ? pattern_find(&job->patterns[k], buf, size, 0) : -1;
    while (pos < size && count < job->most) {
        const unsigned char *nl = line_end(buf + pos, buf + size);
        if (nl == NULL) break;
        Py_ssize_t len = nl - (buf + pos), after = pos + len + 1;
        int kind = head_kind(buf + pos, len, &seq);
        if (kind < 0 || !crc_ok(buf + pos, len)) break;
        int hit = job->every;
#ifdef WREN_X86
        if (next >= 0 && next < after) {
            hit = 1;
            next = finder_find(&finder, buf, size, after);
        }
#endif
        if (esc >= 0 && esc < after) {
            hit = 1;
            esc = escape_find(buf, size, after);
        }
        for (int k = 0; k < job->npat; k++) {
            Pattern *pat = &job->patterns[k];
            if (pat->next >= 0 && pat->next < after) {
                hit = 1;
                pat->next = pattern_find(pat, buf, size, after);
            }
        }
        if (hit) job->hits[nhits++] = (int32_t)count;
        job->kinds[count] = (unsigned char)kind;
        job->ends[count++] = (int64_t)(job->base + after);
        seq_next(&seq);
        pos = after;
    }
    job->count = count;
    job->nhits = nhits;
    job->pos = pos;
}

static PyObject *scan(PyObject *self, PyObject *args) {
    Py_buffer view;
    long long base, prev_seq;
    PyObject *needle_obj, *extras;
    int fold, escapes;
    if (!PyArg_ParseTuple(args, "y*LLOppO!", &view, &base, &prev_seq, &needle_obj, &fold, &escapes, &PyTuple_Type,
                          &extras))
        return NULL;
    Job job;
    job.npat = 0;
    job.every = needle_obj == Py_None;
    job.escapes = escapes;
    if (!job.every) {
        if (!PyBytes_Check(needle_obj) || PyBytes_Size(needle_obj) == 0) {
            PyBuffer_Release(&view);
            PyErr_SetString(PyExc_TypeError, "scan: needle must be non-empty bytes or None");
            return NULL;
        }
        pattern_init(&job.patterns[job.npat++], (const unsigned char *)PyBytes_AsString(needle_obj),
                     PyBytes_Size(needle_obj), fold);
    }
    for (Py_ssize_t i = 0; i < PyTuple_Size(extras); i++) {
        PyObject *extra = PyTuple_GetItem(extras, i);
        if (!PyBytes_Check(extra) || PyBytes_Size(extra) == 0 || job.npat == MAX_PATTERNS) {
            PyBuffer_Release(&view);
            PyErr_SetString(PyExc_TypeError, "scan: extras must be at most 15 non-empty bytes");
            return NULL;
        }
        pattern_init(&job.patterns[job.npat++], (const unsigned char *)PyBytes_AsString(extra), PyBytes_Size(extra),
                     1);
    }
    job.buf = (const unsigned char *)view.buf;
    job.size = view.len;
    job.base = base;
    job.prev_seq = prev_seq;
    /* A vouched line has at least 40 bytes with its newline: that bounds the arrays. */
    job.most = job.size / 40 + 1;
    /* The outputs go to memory of our own, then are copied to bytes of the sizes found (the limited API has no
     * bytes to shrink in place): 13 bytes a line of at least 40. */
    unsigned char *room = malloc((size_t)job.most * (sizeof(int64_t) + sizeof(int32_t) + 1));
    if (room == NULL) {
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    job.ends = (int64_t *)room;
    job.hits = (int32_t *)(room + (size_t)job.most * sizeof(int64_t));
    job.kinds = room + (size_t)job.most * (sizeof(int64_t) + sizeof(int32_t));
    Py_BEGIN_ALLOW_THREADS
    run_job(&job);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    Py_ssize_t count = job.count, nhits = job.nhits;
    PyObject *out = Py_BuildValue("(nny#y#y#)", count, job.pos, (const char *)job.ends,
                                  count * (Py_ssize_t)sizeof(int64_t), (const char *)job.kinds, count,
                                  (const char *)job.hits, nhits * (Py_ssize_t)sizeof(int32_t));
    free(room);
    return out;
}

/* The offset of the first thing a raw pass looks for (the needle, an escape, an extra) in buf, or -1: the
 * same tests as scan's candidates, over any bytes from a line's start, with no line vouched for. */
static Py_ssize_t find_any(Pattern *pats, int npat, int escapes, const unsigned char *buf, Py_ssize_t size) {
    Py_ssize_t best = -1;
    int own[MAX_PATTERNS];
    for (int k = 0; k < npat; k++) own[k] = 1;
#ifdef WREN_X86
    if (have_avx2) {
        Finder finder;
        finder_init(&finder, &pats[0], escapes);
        own[0] = 0;
        for (int k = 1; k < npat; k++) own[k] = !finder_takes(&finder, &pats[k]);
        escapes = 0;
        best = finder_find(&finder, buf, size, 0);
    }
#endif
    for (int k = 0; k < npat; k++) {
        if (!own[k]) continue;
        Py_ssize_t at = pattern_find(&pats[k], buf, size, 0);
        if (at >= 0 && (best < 0 || at < best)) best = at;
    }
    if (escapes) {
        Py_ssize_t at = escape_find(buf, size, 0);
        if (at >= 0 && (best < 0 || at < best)) best = at;
    }
    return best;
}

static PyObject *find_py(PyObject *self, PyObject *args) {
    Py_buffer view;
    PyObject *needle, *extras;
    int fold, escapes;
    if (!PyArg_ParseTuple(args, "y*SppO!", &view, &needle, &fold, &escapes, &PyTuple_Type, &extras)) return NULL;
    Pattern pats[MAX_PATTERNS];
    int npat = 0;
    if (PyBytes_Size(needle) == 0 || PyTuple_Size(extras) >= MAX_PATTERNS) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_TypeError, "find: the needle must be non-empty bytes, with at most 15 extras");
        return NULL;
    }
    pattern_init(&pats[npat++], (const unsigned char *)PyBytes_AsString(needle), PyBytes_Size(needle), fold);
    for (Py_ssize_t i = 0; i < PyTuple_Size(extras); i++) {
        PyObject *extra = PyTuple_GetItem(extras, i);
        if (!PyBytes_Check(extra) || PyBytes_Size(extra) == 0) {
            PyBuffer_Release(&view);
            PyErr_SetString(PyExc_TypeError, "find: extras must be non-empty bytes");
            return NULL;
        }
        pattern_init(&pats[npat++], (const unsigned char *)PyBytes_AsString(extra), PyBytes_Size(extra), 1);
    }
    Py_ssize_t at;
    Py_BEGIN_ALLOW_THREADS
    at = find_any(pats, npat, escapes, (const unsigned char *)view.buf, view.len);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(at);
}

/* --- another agent's file, skimmed ------------------------------------------------------------
 * plain(buf) says whether a run of whole lines reads as its bytes say, so a file no line of which can match
 * need not be translated: how many lines it has, and where the first doubt is (or -1). A doubt is
 *   a number too large for a float (msgspec refuses it: past 1.8e308): one whose digits before its point and
 *     exponent add up to 300 or more, or with 300 digits before a point. A number starts with a digit after
 *     one of :[, or white space, or after a minus after one of those; strings are not told apart (a number in
 *     one is a doubt too);
 *   a \u escape of a control character that msgspec writes otherwise when a translator encodes a value again
 *     (\u0008 \u0009 \u000a \u000c \u000d as \b \t \n \f \r; an uppercase hex digit in lowercase);
 *   bytes that are not UTF-8 (Python's decoder's rules: no surrogates, no overlong forms);
 *   a blank line (nothing but white space), where the reader stops and msgspec's decode_lines goes on. */

static int delimits(unsigned char c) {
    return c == ':' || c == '[' || c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int is_digit(unsigned char c) {
    return c >= '0' && c <= '9';
}

/* Whether the digits ending just before `at` (an e, E or point after a digit) end a number too large. */
static int huge_at(const unsigned char *buf, Py_ssize_t at, Py_ssize_t n) {
    Py_ssize_t k = at;
    while (k > 0 && is_digit(buf[k - 1])) k--;
    Py_ssize_t run = at - k, whole = run, start = k;
    if (buf[at] != '.' && k > 0 && buf[k - 1] == '.') { /* a fraction: count the digits before its point */
        Py_ssize_t point = k - 1;
        start = point;
        while (start > 0 && is_digit(buf[start - 1])) start--;
        whole = point - start;
        if (whole == 0) return 0;
    }
    unsigned char before = start > 0 ? buf[start - 1] : '\n';
    int number = delimits(before) || (before == '-' && (start < 2 || delimits(buf[start - 2])));
    if (!number) return 0;
    if (buf[at] == '.') return run >= 300;
    Py_ssize_t j = at + 1, exponent = 0;
    if (j < n && buf[j] == '+') j++;
    for (; j < n && is_digit(buf[j]); j++)
        if (exponent < 100000) exponent = exponent * 10 + (buf[j] - '0');
    return whole + exponent >= 300;
}

/* Whether the backslash at `at`, before a u, starts an escape of a control character msgspec writes otherwise. */
static int control_at(const unsigned char *buf, Py_ssize_t at, Py_ssize_t n) {
    if (n - at < 6 || buf[at + 2] != '0' || buf[at + 3] != '0') return 0;
    unsigned char high = buf[at + 4], low = buf[at + 5];
    if (high == '0' && (low == '8' || low == '9' || low == 'a' || low == 'A' || low == 'c' || low == 'C' ||
                        low == 'd' || low == 'D'))
        return 1;
    return (high == '0' || high == '1') && low >= 'A' && low <= 'F';
}

/* The length of the UTF-8 sequence at p, or 0 when it is not one. */
static int utf8_len(const unsigned char *p, const unsigned char *end) {
    unsigned char c = p[0], lo = 0x80, hi = 0xBF;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) return end - p >= 2 && (p[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
        return end - p >= 3 && p[1] >= lo && p[1] <= hi && (p[2] & 0xC0) == 0x80 ? 3 : 0;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
        return end - p >= 4 && p[1] >= lo && p[1] <= hi && (p[2] & 0xC0) == 0x80 && (p[3] & 0xC0) == 0x80 ? 4 : 0;
    }
    return 0;
}

/* One byte at k looked at (and the pair k, k+1): 1 when it is a doubt. `valid` is how far UTF-8 was checked. */
static int plain_byte(const unsigned char *buf, Py_ssize_t k, Py_ssize_t n, Py_ssize_t *valid, Py_ssize_t *lines) {
    unsigned char c = buf[k];
    if (c == '\n') {
        (*lines)++;
        Py_ssize_t back = k;
        while (back > 0 && (buf[back - 1] == ' ' || buf[back - 1] == '\t' || buf[back - 1] == '\r')) back--;
        if (back == 0 || buf[back - 1] == '\n') return 1; /* a blank line: the reader stops there */
    }
    if (c >= 0x80 && k >= *valid) {
        int len = utf8_len(buf + k, buf + n);
        if (len == 0) return 1;
        *valid = k + len;
    }
    if (k + 1 < n) {
        unsigned char d = buf[k + 1];
        if (is_digit(c) && (d == 'e' || d == 'E' || d == '.') && huge_at(buf, k + 1, n)) return 1;
        if (c == '\\' && d == 'u' && control_at(buf, k, n)) return 1;
    }
    return 0;
}

static Py_ssize_t plain_plain(const unsigned char *buf, Py_ssize_t n, Py_ssize_t from, Py_ssize_t valid,
                              Py_ssize_t *lines) {
    for (Py_ssize_t k = from; k < n; k++)
        if (plain_byte(buf, k, n, &valid, lines)) return k;
    return -1;
}

#ifdef WREN_X86
__attribute__((target("avx2,popcnt"))) static Py_ssize_t plain_avx2(const unsigned char *buf, Py_ssize_t n,
                                                                    Py_ssize_t *lines) {
    const __m256i nl = _mm256_set1_epi8('\n'), slash = _mm256_set1_epi8('\\'), u = _mm256_set1_epi8('u');
    const __m256i e = _mm256_set1_epi8('e'), big_e = _mm256_set1_epi8('E'), point = _mm256_set1_epi8('.');
    const __m256i below0 = _mm256_set1_epi8('0' - 1), above9 = _mm256_set1_epi8('9' + 1);
    Py_ssize_t k = 0, valid = 0, count = 0;
    for (; n - k >= 33; k += 32) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(buf + k));
        __m256i w = _mm256_loadu_si256((const __m256i *)(buf + k + 1));
        __m256i digit = _mm256_and_si256(_mm256_cmpgt_epi8(v, below0), _mm256_cmpgt_epi8(above9, v));
        __m256i ends = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(w, e), _mm256_cmpeq_epi8(w, big_e)),
                                       _mm256_cmpeq_epi8(w, point));
        __m256i pairs = _mm256_or_si256(_mm256_and_si256(digit, ends),
                                        _mm256_and_si256(_mm256_cmpeq_epi8(v, slash), _mm256_cmpeq_epi8(w, u)));
        unsigned newlines = (unsigned)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, nl));
        unsigned m = (unsigned)_mm256_movemask_epi8(pairs) | (unsigned)_mm256_movemask_epi8(v) | newlines;
        Py_ssize_t ignored = 0;
        while (m) {
            Py_ssize_t at = k + __builtin_ctz(m);
            if (plain_byte(buf, at, n, &valid, &ignored)) {
                *lines = count;
                return at;
            }
            m &= m - 1;
        }
        count += __builtin_popcount(newlines);
    }
    Py_ssize_t rest = plain_plain(buf, n, k, valid, &count);
    *lines = count;
    return rest;
}
#endif

static PyObject *plain_py(PyObject *self, PyObject *args) {
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "y*", &view)) return NULL;
    Py_ssize_t at, lines = 0;
    Py_BEGIN_ALLOW_THREADS
#ifdef WREN_X86
    if (have_avx2)
        at = plain_avx2((const unsigned char *)view.buf, view.len, &lines);
    else
#endif
        at = plain_plain((const unsigned char *)view.buf, view.len, 0, 0, &lines);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    return Py_BuildValue("(nn)", lines, at);
}

static PyObject *crc32_py(PyObject *self, PyObject *args) {
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "y*", &view)) return NULL;
    uint32_t c;
    Py_BEGIN_ALLOW_THREADS
    c = crc32_of((const unsigned char *)view.buf, (size_t)view.len);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    return PyLong_FromUnsignedLong(c);
}

static PyObject *folding(PyObject *self, PyObject *unused) {
#ifdef WREN_X86
    return PyBool_FromLong(crc_clmul);
#else
    Py_RETURN_FALSE;
#endif
}

/* An ASCII letter or digit: what a word of pairs() is made of. */
static inline int word_char(unsigned char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static inline Py_ssize_t copy_lower(char *out, const unsigned char *data, Py_ssize_t from, Py_ssize_t to) {
    for (Py_ssize_t i = from; i < to; i++) *out++ = (char)lower[data[i]];
    return to - from;
}

/* pairs over bytes in which every character that is not ASCII is one or more bytes >= 0x80 (a separator). */
static PyObject *pairs_of(const unsigned char *data, Py_ssize_t n) {
    /* Each word is written at most twice, each pair with one _ and at most one space, and between two words
       there is at least one separator: never more than 2n characters. */
    char *out = PyMem_Malloc((size_t)(2 * n + 1));
    if (out == NULL) return PyErr_NoMemory();
    Py_ssize_t o = 0, prev_start = -1, prev_end = -1, i = 0;
    while (i < n) {
        if (!word_char(data[i])) {
            i++;
            continue;
        }
        Py_ssize_t start = i;
        while (i < n && word_char(data[i])) i++;
        if (prev_start >= 0) {
            if (o) out[o++] = ' ';
            o += copy_lower(out + o, data, prev_start, prev_end);
            out[o++] = '_';
            o += copy_lower(out + o, data, start, i);
        }
        prev_start = start;
        prev_end = i;
    }
    PyObject *result = PyUnicode_DecodeASCII(out, o, NULL);
    PyMem_Free(out);
    return result;
}

/* The text read as UTF-8 (the limited API's way to its characters; no copy for an ASCII str, where most
 * text is): a character that is not ASCII is bytes >= 0x80 there, a separator as it is in the str. A str
 * that UTF-8 cannot hold (a lone surrogate) is read as code points instead, each one past ASCII made 0x80. */
static PyObject *pairs_py(PyObject *self, PyObject *args) {
    PyObject *text;
    if (!PyArg_ParseTuple(args, "U", &text)) return NULL;
    Py_ssize_t n;
    const char *utf8 = PyUnicode_AsUTF8AndSize(text, &n);
    if (utf8 != NULL) return pairs_of((const unsigned char *)utf8, n);
    PyErr_Clear();
    Py_UCS4 *points = PyUnicode_AsUCS4Copy(text);
    if (points == NULL) return NULL;
    n = PyUnicode_GetLength(text);
    unsigned char *bytes = (unsigned char *)points; /* narrowed in place: byte i is written after point i is read */
    for (Py_ssize_t i = 0; i < n; i++) bytes[i] = points[i] < 0x80 ? (unsigned char)points[i] : 0x80;
    PyObject *result = pairs_of(bytes, n);
    PyMem_Free(points);
    return result;
}

/* ids(text) -> bytes | None: the numbers of SQLite's group_concat of ids ("12,13,40"), as native 8-byte integers;
 * None when they are not each higher than the one before (the caller sorts them) or the text is not such a list. */
static PyObject *ids_py(PyObject *self, PyObject *args) {
    PyObject *text;
    if (!PyArg_ParseTuple(args, "U", &text)) return NULL;
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(text, &n);
    if (s == NULL) return NULL;
    Py_ssize_t count = n > 0;
    for (Py_ssize_t i = 0; i < n; i++) count += s[i] == ',';
    PyObject *out = PyBytes_FromStringAndSize(NULL, count * (Py_ssize_t)sizeof(long long));
    if (out == NULL) return NULL;
    long long *at = (long long *)PyBytes_AsString(out);
    long long last = -1;
    Py_ssize_t i = 0, k = 0;
    while (k < count) {
        long long value = 0;
        Py_ssize_t digits = 0;
        for (; i < n && s[i] >= '0' && s[i] <= '9' && digits < 18; i++, digits++) value = value * 10 + (s[i] - '0');
        if (digits == 0 || value <= last || (i < n && s[i] != ',') || (i == n && k != count - 1)) {
            Py_DECREF(out);
            Py_RETURN_NONE;
        }
        at[k++] = last = value;
        i++; /* past the comma */
    }
    return out;
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS,
     "scan(buf, base, prev_seq, needle, fold, escapes, extras) -> (count, consumed, ends, kinds, hits)"},
    {"find", find_py, METH_VARARGS,
     "find(buf, needle, fold, escapes, extras) -> int: where the first candidate's match starts in buf, or -1"},
    {"plain", plain_py, METH_VARARGS, "plain(buf) -> (lines, doubt): newlines, and the first doubt (see above) or -1"},
    {"crc32", crc32_py, METH_VARARGS, "crc32(buf) -> int: the CRC-32 scan checks lines with (zlib's), for tests."},
    {"pairs", pairs_py, METH_VARARGS, "pairs(text) -> str: each two adjacent words, lowercased, a_b b_c ..."},
    {"ids", ids_py, METH_VARARGS, "ids(text) -> bytes | None: '12,13,40' as native 8-byte integers, if ascending"},
    {"folding", folding, METH_NOARGS, "folding() -> bool: whether the CRC folds blocks with PCLMULQDQ here."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_scan", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__scan(void) {
    crc_init();
    tables_init();
    hex_init();
#ifdef WREN_X86
    __builtin_cpu_init();
    have_avx2 = __builtin_cpu_supports("avx2");
#endif
    return PyModule_Create(&module);
}
