/* TEST ONLY: the smallest CoreCLR profiler that accepts an attach, for
 * tests/attach/run-*.sh. It is not mdprofile's profiler (profiler/ holds
 * that) and does nothing but prove that an attach request reached the
 * runtime and loaded a profiler: InitializeForAttach writes a marker file
 * whose path arrives as the attach's client data, ProfilerAttachComplete
 * appends a line to it.
 *
 * The COM declarations are written here from the ABI facts of
 * src/coreclr/inc/corprof.idl (dotnet/runtime): IUnknown's 3 methods, then
 * ICorProfilerCallback's 69 (Initialize .. ExceptionCLRCatcherExecute),
 * ICorProfilerCallback2's 8 (ThreadNameChanged .. HandleDestroyed) and
 * ICorProfilerCallback3's 3 (InitializeForAttach, ProfilerAttachComplete,
 * ProfilerDetachSucceeded), so InitializeForAttach is vtable slot 80. The
 * runtime asks DllGetClassObject for an IClassFactory, creates the callback
 * object, and requires ICorProfilerCallback3 to attach; QueryInterface for
 * the newer callback interfaces fails, which the runtime accepts.
 *
 * Every slot without its own function holds `ok`, which takes only `this`
 * and returns S_OK: under the x86-64 and AArch64 SysV calling conventions
 * the caller passes arguments in registers (or its own stack area) and
 * removes nothing the callee must know about, so a callee that ignores
 * extra arguments returns correctly. That shortcut is acceptable in a test
 * double that enables no events; a real profiler declares every signature. */
#define _DEFAULT_SOURCE /* O_CLOEXEC */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef int32_t HRESULT;
typedef struct guid {
    uint32_t d1;
    uint16_t d2, d3;
    uint8_t d4[8];
} guid;

#define S_OK 0
#define E_NOINTERFACE ((HRESULT)0x80004002u)
#define E_POINTER ((HRESULT)0x80004003u)
#define CLASS_E_NOAGGREGATION ((HRESULT)0x80040110u)
#define CLASS_E_CLASSNOTAVAILABLE ((HRESULT)0x80040111u)

/* This test profiler's CLSID; the tests pass it as text. */
static const guid clsid_testprof = {
    0x8B2C0D4E, 0x5A61, 0x4F7B, {0x9C, 0x3D, 0x2E, 0x1F, 0x0A, 0x9B, 0x8C, 0x7D}};

static const guid iid_iunknown = {
    0x00000000, 0x0000, 0x0000, {0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x46}};
static const guid iid_iclassfactory = {
    0x00000001, 0x0000, 0x0000, {0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x46}};
static const guid iid_callback = {
    0x176FBED1, 0xA55C, 0x4796, {0x98, 0xCA, 0xA9, 0xDA, 0x0E, 0xF8, 0x83, 0xE7}};
static const guid iid_callback2 = {
    0x8A8CC829, 0xCCF2, 0x49FE, {0xBB, 0xAE, 0x0F, 0x02, 0x22, 0x28, 0x07, 0x1A}};
static const guid iid_callback3 = {
    0x4FD2ED52, 0x7731, 0x4B8D, {0x94, 0x69, 0x03, 0xD2, 0xCC, 0x30, 0x86, 0xC5}};

#define SLOT_QUERYINTERFACE 0
#define SLOT_ADDREF 1
#define SLOT_RELEASE 2
#define SLOT_INITIALIZE_FOR_ATTACH (3 + 69 + 8)
#define SLOT_PROFILER_ATTACH_COMPLETE (SLOT_INITIALIZE_FOR_ATTACH + 1)
#define CALLBACK3_SLOTS (SLOT_INITIALIZE_FOR_ATTACH + 3)

typedef void (*slot_fn)(void);
typedef struct object {
    const slot_fn *vtbl;
} object;

static char marker[4096];

static int same(const guid *a, const guid *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

static void append_marker(const char *line)
{
    int fd;
    if (!marker[0])
        return;
    fd = open(marker, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    if (write(fd, line, strlen(line)) < 0) {
        /* nothing to do: the test reports the missing line */
    }
    close(fd);
}

static HRESULT ok(object *self)
{
    (void)self;
    return S_OK;
}

static uint32_t add_ref(object *self)
{
    (void)self;
    return 1; /* static objects: counting would free nothing */
}

static HRESULT cb_query_interface(object *self, const guid *iid, void **out)
{
    if (!out)
        return E_POINTER;
    if (same(iid, &iid_iunknown) || same(iid, &iid_callback) || same(iid, &iid_callback2) ||
        same(iid, &iid_callback3)) {
        *out = self;
        return S_OK;
    }
    *out = NULL;
    return E_NOINTERFACE;
}

static HRESULT initialize_for_attach(object *self, void *info, const void *client_data,
                                     uint32_t client_data_len)
{
    char line[128];
    (void)self;
    (void)info;
    if (!client_data || client_data_len == 0 || client_data_len >= sizeof marker)
        return S_OK; /* no marker path: nothing to report */
    memcpy(marker, client_data, client_data_len);
    marker[client_data_len] = '\0';
    snprintf(line, sizeof line, "InitializeForAttach client_data_len=%u\n",
             (unsigned)client_data_len);
    append_marker(line);
    return S_OK;
}

static HRESULT profiler_attach_complete(object *self)
{
    (void)self;
    append_marker("ProfilerAttachComplete\n");
    return S_OK;
}

static slot_fn callback_vtbl[CALLBACK3_SLOTS];
static object callback = {callback_vtbl};

static HRESULT cf_query_interface(object *self, const guid *iid, void **out)
{
    if (!out)
        return E_POINTER;
    if (same(iid, &iid_iunknown) || same(iid, &iid_iclassfactory)) {
        *out = self;
        return S_OK;
    }
    *out = NULL;
    return E_NOINTERFACE;
}

static HRESULT cf_create_instance(object *self, void *outer, const guid *iid, void **out)
{
    (void)self;
    if (!out)
        return E_POINTER;
    *out = NULL;
    if (outer)
        return CLASS_E_NOAGGREGATION;
    return cb_query_interface(&callback, iid, out);
}

/* IUnknown (3), CreateInstance, LockServer */
static const slot_fn factory_vtbl[5] = {(slot_fn)cf_query_interface, (slot_fn)add_ref,
                                        (slot_fn)add_ref, (slot_fn)cf_create_instance, (slot_fn)ok};
static object factory = {factory_vtbl};

__attribute__((constructor)) static void fill_vtable(void)
{
    for (int i = 0; i < CALLBACK3_SLOTS; i++)
        callback_vtbl[i] = (slot_fn)ok;
    callback_vtbl[SLOT_QUERYINTERFACE] = (slot_fn)cb_query_interface;
    callback_vtbl[SLOT_ADDREF] = (slot_fn)add_ref;
    callback_vtbl[SLOT_RELEASE] = (slot_fn)add_ref;
    callback_vtbl[SLOT_INITIALIZE_FOR_ATTACH] = (slot_fn)initialize_for_attach;
    callback_vtbl[SLOT_PROFILER_ATTACH_COMPLETE] = (slot_fn)profiler_attach_complete;
}

__attribute__((visibility("default"))) HRESULT DllGetClassObject(const guid *clsid, const guid *iid,
                                                                 void **out);
HRESULT DllGetClassObject(const guid *clsid, const guid *iid, void **out)
{
    if (!out)
        return E_POINTER;
    *out = NULL;
    if (!same(clsid, &clsid_testprof))
        return CLASS_E_CLASSNOTAVAILABLE;
    return cf_query_interface(&factory, iid, out);
}
