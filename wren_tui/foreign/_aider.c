/* How many lines aider's history exports to, counted in C: the line numbers of a big history's tail.
 *
 * Optional: setup builds it when a C compiler is there; without it, aider.py counts the same way in
 * Python (slower, same counts). It releases the GIL while it counts.
 *
 * count_blocks(buf) -> int
 *   buf  a bytes-like start of an aider chat history that ends where a block starts (a run's
 *        header or a prompt's first `#### ` line), or at the end of the file
 * The number of lines aider.export gives for buf, from its Markdown lines alone. Each line is one
 * of: a run's header (`# aider chat started at `), a prompt line (`####`, then a space, a tab or
 * nothing), a note (`>`; a tokens note is `>`, spaces or tabs, then `Tokens: N sent, M received`),
 * a blank line (spaces, tabs and CRs only), or a reply line (anything else). A header, a tokens
 * note, the first of a run of prompt lines, the first of a run of other notes, and a reply line
 * that is not already in a reply (blank lines do not end one; anything but a reply line does) each
 * begin one exported line. aider.py's `_BLOCK` expression reads the same blocks.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

enum { NONE, HEADER, PROMPT, TOKENS, NOTE, BLANK, REPLY };

static const char header[] = "# aider chat started at ";

/* [0-9.,]+ then an optional k, K, m or M; the position after it, or NULL. */
static const char *count_word(const char *p, const char *end) {
    const char *start = p;
    while (p < end && ((*p >= '0' && *p <= '9') || *p == '.' || *p == ',')) p++;
    if (p == start) return NULL;
    if (p < end && (*p == 'k' || *p == 'K' || *p == 'm' || *p == 'M')) p++;
    return p;
}

static int literal(const char **p, const char *end, const char *text) {
    size_t n = strlen(text);
    if ((size_t)(end - *p) < n || memcmp(*p, text, n) != 0) return 0;
    *p += n;
    return 1;
}

/* The line's kind from its bytes (without its newline). */
static int kind_of(const char *line, const char *end) {
    size_t n = (size_t)(end - line);
    if (n >= sizeof(header) - 1 && memcmp(line, header, sizeof(header) - 1) == 0) return HEADER;
    if (n >= 4 && memcmp(line, "####", 4) == 0 && (n == 4 || line[4] == ' ' || line[4] == '\t')) return PROMPT;
    if (n >= 1 && line[0] == '>') {
        const char *p = line + 1;
        while (p < end && (*p == ' ' || *p == '\t')) p++;
        if (literal(&p, end, "Tokens: ") && (p = count_word(p, end)) != NULL && literal(&p, end, " sent, ") &&
            (p = count_word(p, end)) != NULL && literal(&p, end, " received"))
            return TOKENS;
        return NOTE;
    }
    for (const char *p = line; p < end; p++)
        if (*p != ' ' && *p != '\t' && *p != '\r') return REPLY;
    return BLANK;
}

static PyObject *count_blocks(PyObject *self, PyObject *args) {
    Py_buffer buf;
    if (!PyArg_ParseTuple(args, "y*", &buf)) return NULL;
    const char *p = buf.buf, *end = p + buf.len;
    long long count = 0;
    Py_BEGIN_ALLOW_THREADS
    int previous = NONE, in_reply = 0;
    while (p < end) {
        const char *newline = memchr(p, '\n', (size_t)(end - p));
        const char *stop = newline != NULL ? newline : end;
        int kind = kind_of(p, stop);
        switch (kind) {
        case HEADER:
        case TOKENS:
            count++;
            in_reply = 0;
            break;
        case PROMPT:
        case NOTE:
            count += previous != kind;
            in_reply = 0;
            break;
        case REPLY:
            count += !in_reply;
            in_reply = 1;
            break;
        default:
            break; /* a blank line: inside a reply, or between blocks */
        }
        previous = kind;
        p = newline != NULL ? newline + 1 : end;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&buf);
    return PyLong_FromLongLong(count);
}

static PyMethodDef methods[] = {
    {"count_blocks", count_blocks, METH_VARARGS, "count_blocks(buf) -> int: the lines aider.export gives for buf."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_aider", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__aider(void) { return PyModule_Create(&module); }
