/* The COM entry point: DllGetClassObject hands the runtime a class factory
 * for mdprofile's CLSID, whose CreateInstance makes the profiler object (one
 * per process). DllGetClassObject is the only symbol the shared object
 * exports (exports.map). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/channel.h"
#include "coreclr/clr.h"

const CLSID mdp_clsid =
    MDP_GUID(0x1C49C441, 0x593E, 0x4870, 0x85, 0x6F, 0x98, 0xDA, 0x7A, 0x9D, 0xEE, 0x94);

static HRESULT cf_QueryInterface(IClassFactory *self, REFIID iid, void **out)
{
    if (!out)
        return E_POINTER;
    if (mdp_guid_equal(iid, &mdp_IID_IUnknown) || mdp_guid_equal(iid, &mdp_IID_IClassFactory)) {
        *out = self;
        return S_OK;
    }
    *out = NULL;
    return E_NOINTERFACE;
}

/* The factory is static: counting references would free nothing. */
static ULONG cf_AddRef(IClassFactory *self)
{
    return 2;
}

static ULONG cf_Release(IClassFactory *self)
{
    return 1;
}

static HRESULT cf_CreateInstance(IClassFactory *self, IUnknown *outer, REFIID iid, void **out)
{
    if (!out)
        return E_POINTER;
    *out = NULL;
    if (outer)
        return CLASS_E_NOAGGREGATION;
    if (!mdp_clr_self) {
        mdp_clr *p = mdp_clr_create();
        if (!p)
            return E_OUTOFMEMORY;
        mdp_clr_self = p;
    }
    ICorProfilerCallback *cb = &mdp_clr_self->iface;
    return cb->lpVtbl->QueryInterface(cb, iid, out);
}

static HRESULT cf_LockServer(IClassFactory *self, BOOL lock)
{
    return S_OK;
}

static const IClassFactoryVtbl factory_vtbl = {cf_QueryInterface, cf_AddRef, cf_Release,
                                               cf_CreateInstance, cf_LockServer};
static IClassFactory factory = {&factory_vtbl};

__attribute__((visibility("default"))) HRESULT DllGetClassObject(REFCLSID clsid, REFIID iid,
                                                                 void **out);

HRESULT DllGetClassObject(REFCLSID clsid, REFIID iid, void **out)
{
    if (!out)
        return E_POINTER;
    *out = NULL;
    if (!clsid || !mdp_guid_equal(clsid, &mdp_clsid)) {
        /* said to the launcher, if there is one: never on the host's stderr */
        char text[39] = "(none)", msg[256];
        if (clsid)
            mdp_guid_format(text, clsid);
        const char *to = getenv("MDPROFILE_NOTIFY");
        int n = snprintf(msg, sizeof msg,
                         "note %d asked%%20for%%20CLSID%%20%s;%%20this%%20profiler%%20is%%20%s",
                         (int)getpid(), text, MDP_CLSID_TEXT);
        if (to && n > 0 && (size_t)n < sizeof msg)
            mdp_channel_send_once(to, msg, (size_t)n);
        return CLASS_E_CLASSNOTAVAILABLE;
    }
    return factory.lpVtbl->QueryInterface(&factory, iid, out);
}
