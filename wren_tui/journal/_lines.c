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
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

static uint32_t crc_table[8][256];

static void crc_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = crc_table[0][i];
        for (int t = 1; t < 8; t++) {
            c = crc_table[0][c & 0xFF] ^ (c >> 8);
            crc_table[t][i] = c;
        }
    }
}

/* Slicing-by-8: eight bytes per step through eight tables; byte order handled by loading bytes. */
static uint32_t crc32_of(const unsigned char *p, Py_ssize_t n) {
    uint32_t c = 0xFFFFFFFFu;
    while (n >= 8) {
        uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
        uint32_t hi = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 | (uint32_t)p[7] << 24;
        c = crc_table[7][lo & 0xFF] ^ crc_table[6][(lo >> 8) & 0xFF] ^ crc_table[5][(lo >> 16) & 0xFF] ^
            crc_table[4][lo >> 24] ^ crc_table[3][hi & 0xFF] ^ crc_table[2][(hi >> 8) & 0xFF] ^
            crc_table[1][(hi >> 16) & 0xFF] ^ crc_table[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n-- > 0) c = crc_table[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

static const char CRC_MARK[] = ",\"crc\":\""; /* 8 bytes */
#define SUFFIX_LEN 18                         /* ,"crc":"xxxxxxxx"} */

static int hex_value(unsigned char ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    return -1; /* uppercase and anything else: Python reads that line */
}

/* 1 when the line (without its newline) is ours and clean, else 0. */
static int line_ok(const unsigned char *line, Py_ssize_t len) {
    if (len < SUFFIX_LEN + 2) return 0;
    if (memchr(line, '\0', (size_t)len) || memchr(line, '\r', (size_t)len)) return 0;
    const unsigned char *tail = line + len - SUFFIX_LEN;
    if (memcmp(tail, CRC_MARK, 8) != 0 || tail[16] != '"' || tail[17] != '}') return 0;
    uint32_t expected = 0;
    for (int k = 8; k < 16; k++) {
        int v = hex_value(tail[k]);
        if (v < 0) return 0;
        expected = expected << 4 | (uint32_t)v;
    }
    return crc32_of(line, len - SUFFIX_LEN) == expected;
}

static PyObject *check_lines(PyObject *self, PyObject *args) {
    Py_buffer view;
    long long base;
    if (!PyArg_ParseTuple(args, "y*L", &view, &base)) return NULL;
    const unsigned char *buf = (const unsigned char *)view.buf;
    Py_ssize_t size = view.len;
    /* A line that passes has at least SUFFIX_LEN + 3 bytes with its newline: that bounds the ends. */
    Py_ssize_t lines = size / (SUFFIX_LEN + 3) + 1;
    PyObject *ends = PyBytes_FromStringAndSize(NULL, lines * (Py_ssize_t)sizeof(int64_t));
    if (ends == NULL) {
        PyBuffer_Release(&view);
        return NULL;
    }
    int64_t *out = (int64_t *)PyBytes_AS_STRING(ends);
    Py_ssize_t count = 0, pos = 0;
    Py_BEGIN_ALLOW_THREADS
    while (pos < size) {
        const unsigned char *nl = memchr(buf + pos, '\n', (size_t)(size - pos));
        if (nl == NULL) break;
        Py_ssize_t len = nl - (buf + pos);
        if (!line_ok(buf + pos, len)) break;
        pos += len + 1;
        out[count++] = (int64_t)(base + pos);
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    if (count < lines && _PyBytes_Resize(&ends, count * (Py_ssize_t)sizeof(int64_t)) < 0) return NULL;
    return Py_BuildValue("(nNO)", count, ends, pos == size ? Py_True : Py_False);
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
    const char *ts = PyBytes_AS_STRING(args[1]), *body = PyBytes_AS_STRING(args[2]);
    Py_ssize_t ts_len = PyBytes_GET_SIZE(args[1]), body_len = PyBytes_GET_SIZE(args[2]);
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
    unsigned char *start = (unsigned char *)PyBytes_AS_STRING(out), *p = start;
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
    {"crc32", crc32_py, METH_VARARGS, "crc32(buf) -> int: the CRC-32 check_lines uses (zlib's), for tests."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_lines", NULL, -1, methods};

PyMODINIT_FUNC PyInit__lines(void) {
    crc_init();
    return PyModule_Create(&module);
}
