/* The CoreCLR profiling ABI in C: the types, IIDs and vtables of IUnknown,
 * IClassFactory, ICorProfilerCallback..11, ICorProfilerInfo..15 and the
 * enumerators the adapter uses, as the runtime on Linux x86-64 sees them.
 *
 * Written from the facts of dotnet/runtime's src/coreclr/inc/corprof.idl (the
 * method order and the IIDs) and of its PAL (palrt.h: HRESULT is a 32-bit
 * int, WCHAR a 16-bit UTF-16 unit, ULONG and DWORD 32 bits, BOOL an int;
 * STDMETHODCALLTYPE is the platform's C convention). Nothing of the IDL or
 * the runtime's headers is copied; the method lists are X-macro files
 * (callback.def, info.def) so each vtable is written once.
 *
 * Private to the profiler: the names follow the ABI's spelling so that the
 * code reads against the runtime's documentation. */
#ifndef MDP_CORPROF_H
#define MDP_CORPROF_H

#include <stddef.h>
#include <stdint.h>

/* ---- PAL scalar types --------------------------------------------------- */

typedef int32_t HRESULT;
typedef int32_t BOOL;
typedef uint32_t ULONG;
typedef uint32_t DWORD;
typedef uint32_t ULONG32;
typedef uint32_t UINT;
typedef uint32_t UINT32;
typedef uint64_t UINT64;
typedef uint8_t UINT8;
typedef uint16_t USHORT;
typedef uint16_t WCHAR; /* UTF-16 code unit, not wchar_t (32 bits on Linux) */
typedef uint8_t BYTE;
typedef uintptr_t UINT_PTR;
typedef size_t SIZE_T;
typedef void *HANDLE;

typedef struct GUID {
    uint32_t Data1;
    uint16_t Data2;
    uint16_t Data3;
    uint8_t Data4[8];
} GUID;
typedef GUID IID;
typedef GUID CLSID;
typedef const GUID *REFGUID;
typedef const GUID *REFIID;
typedef const GUID *REFCLSID;

#define S_OK ((HRESULT)0)
#define S_FALSE ((HRESULT)1)
#define E_NOTIMPL ((HRESULT)0x80004001u)
#define E_NOINTERFACE ((HRESULT)0x80004002u)
#define E_POINTER ((HRESULT)0x80004003u)
#define E_FAIL ((HRESULT)0x80004005u)
#define E_OUTOFMEMORY ((HRESULT)0x8007000Eu)
#define E_INVALIDARG ((HRESULT)0x80070057u)
#define CLASS_E_NOAGGREGATION ((HRESULT)0x80040110u)
#define CLASS_E_CLASSNOTAVAILABLE ((HRESULT)0x80040111u)
#define FAILED(hr) ((HRESULT)(hr) < 0)
#define SUCCEEDED(hr) ((HRESULT)(hr) >= 0)

/* ---- Profiling API types ------------------------------------------------ */

typedef UINT_PTR ProcessID;
typedef UINT_PTR AssemblyID;
typedef UINT_PTR AppDomainID;
typedef UINT_PTR ModuleID;
typedef UINT_PTR ClassID;
typedef UINT_PTR ThreadID;
typedef UINT_PTR ContextID;
typedef UINT_PTR FunctionID;
typedef UINT_PTR ObjectID;
typedef UINT_PTR GCHandleID;
typedef UINT_PTR COR_PRF_ELT_INFO;
typedef UINT_PTR ReJITID;
typedef UINT_PTR COR_PRF_FRAME_INFO;
typedef UINT_PTR EVENTPIPE_PROVIDER;
typedef UINT_PTR EVENTPIPE_EVENT;
typedef UINT64 EVENTPIPE_SESSION;
typedef void **ObjectHandleID;

typedef uint32_t mdToken;
typedef mdToken mdTypeDef;
typedef mdToken mdMethodDef;
typedef mdToken mdFieldDef;

/* Enumerations travel as 32-bit values. */
typedef uint32_t CorElementType;
typedef uint32_t COR_PRF_JIT_CACHE; /* 0 FOUND, 1 NOT_FOUND */
typedef uint32_t COR_PRF_TRANSITION_REASON;
typedef uint32_t COR_PRF_SUSPEND_REASON;
typedef uint32_t COR_PRF_GC_REASON;
typedef uint32_t COR_PRF_GC_ROOT_KIND;
typedef uint32_t COR_PRF_GC_ROOT_FLAGS;
typedef uint32_t COR_PRF_STATIC_TYPE;
typedef uint32_t COR_PRF_RUNTIME_TYPE;
typedef uint32_t COR_PRF_HANDLE_TYPE;
typedef uint32_t COR_PRF_GC_GENERATION;

#define COR_PRF_CACHED_FUNCTION_FOUND 0u

typedef union FunctionIDOrClientID {
    FunctionID functionID;
    UINT_PTR clientID;
} FunctionIDOrClientID;

typedef struct COR_IL_MAP {
    ULONG32 oldOffset;
    ULONG32 newOffset;
    BOOL fAccurate;
} COR_IL_MAP;

/* ilOffset may also be NO_MAPPING (-1), PROLOG (-2) or EPILOG (-3): the
 * core's MDP_IL_* values. */
typedef struct COR_DEBUG_IL_TO_NATIVE_MAP {
    ULONG32 ilOffset;
    ULONG32 nativeStartOffset;
    ULONG32 nativeEndOffset;
} COR_DEBUG_IL_TO_NATIVE_MAP;

typedef struct COR_FIELD_OFFSET {
    mdFieldDef ridOfField;
    ULONG ulOffset;
} COR_FIELD_OFFSET;

typedef struct COR_PRF_CODE_INFO {
    UINT_PTR startAddress;
    SIZE_T size;
} COR_PRF_CODE_INFO;

typedef struct COR_PRF_FUNCTION {
    FunctionID functionId;
    ReJITID reJitId;
} COR_PRF_FUNCTION;

typedef struct COR_PRF_GC_GENERATION_RANGE {
    COR_PRF_GC_GENERATION generation;
    ObjectID rangeStart;
    UINT_PTR rangeLength;
    UINT_PTR rangeLengthReserved;
} COR_PRF_GC_GENERATION_RANGE;

typedef struct COR_PRF_NONGC_HEAP_RANGE {
    ObjectID rangeStart;
    UINT_PTR rangeLength;
    UINT_PTR rangeLengthReserved;
} COR_PRF_NONGC_HEAP_RANGE;

typedef struct COR_PRF_EX_CLAUSE_INFO {
    uint32_t clauseType;
    UINT_PTR programCounter;
    UINT_PTR framePointer;
    UINT_PTR shadowStackPointer;
} COR_PRF_EX_CLAUSE_INFO;

typedef struct COR_PRF_EVENTPIPE_PROVIDER_CONFIG {
    const WCHAR *providerName;
    UINT64 keywords;
    UINT32 loggingLevel;
    const WCHAR *filterData;
} COR_PRF_EVENTPIPE_PROVIDER_CONFIG;

typedef struct COR_PRF_EVENTPIPE_PARAM_DESC {
    UINT32 type;
    UINT32 elementType;
    const WCHAR *name;
} COR_PRF_EVENTPIPE_PARAM_DESC;

typedef struct COR_PRF_EVENT_DATA {
    UINT64 ptr;
    UINT32 size;
    UINT32 reserved;
} COR_PRF_EVENT_DATA;

/* Enter/leave hooks (SetEnterLeaveFunctionHooks3[WithInfo]) and the
 * FunctionID mapper. */
typedef void FunctionEnter3(FunctionIDOrClientID id);
typedef void FunctionLeave3(FunctionIDOrClientID id);
typedef void FunctionTailcall3(FunctionIDOrClientID id);
typedef void FunctionEnter3WithInfo(FunctionIDOrClientID id, COR_PRF_ELT_INFO elt);
typedef void FunctionLeave3WithInfo(FunctionIDOrClientID id, COR_PRF_ELT_INFO elt);
typedef void FunctionTailcall3WithInfo(FunctionIDOrClientID id, COR_PRF_ELT_INFO elt);
typedef UINT_PTR FunctionIDMapper2(FunctionID fn, void *client, BOOL *hook);

/* COR_PRF_MONITOR (SetEventMask2, low word) */
#define COR_PRF_MONITOR_FUNCTION_UNLOADS 0x00000001u
#define COR_PRF_MONITOR_CLASS_LOADS 0x00000002u
#define COR_PRF_MONITOR_MODULE_LOADS 0x00000004u
#define COR_PRF_MONITOR_ASSEMBLY_LOADS 0x00000008u
#define COR_PRF_MONITOR_APPDOMAIN_LOADS 0x00000010u
#define COR_PRF_MONITOR_JIT_COMPILATION 0x00000020u
#define COR_PRF_MONITOR_EXCEPTIONS 0x00000040u
#define COR_PRF_MONITOR_GC 0x00000080u
#define COR_PRF_MONITOR_OBJECT_ALLOCATED 0x00000100u
#define COR_PRF_MONITOR_THREADS 0x00000200u
#define COR_PRF_MONITOR_ENTERLEAVE 0x00001000u
#define COR_PRF_MONITOR_CACHE_SEARCHES 0x00020000u
#define COR_PRF_DISABLE_INLINING 0x00200000u
#define COR_PRF_ENABLE_OBJECT_ALLOCATED 0x00800000u
#define COR_PRF_ENABLE_FRAME_INFO 0x08000000u
#define COR_PRF_ENABLE_STACK_SNAPSHOT 0x10000000u
#define COR_PRF_SNAPSHOT_DEFAULT 0x0u
/* COR_PRF_HIGH_MONITOR (high word) */
#define COR_PRF_HIGH_MONITOR_DYNAMIC_FUNCTION_UNLOADS 0x00000004u
#define COR_PRF_HIGH_BASIC_GC 0x00000010u
#define COR_PRF_HIGH_MONITOR_LARGEOBJECT_ALLOCATED 0x00000040u
#define COR_PRF_HIGH_MONITOR_EVENT_PIPE 0x00000080u
#define COR_PRF_HIGH_MONITOR_PINNEDOBJECT_ALLOCATED 0x00000100u

/* COR_PRF_MODULE_FLAGS (GetModuleInfo2) */
#define COR_PRF_MODULE_DISK 0x01u
#define COR_PRF_MODULE_NGEN 0x02u
#define COR_PRF_MODULE_DYNAMIC 0x04u
#define COR_PRF_MODULE_COLLECTIBLE 0x08u
#define COR_PRF_MODULE_RESOURCE 0x10u
#define COR_PRF_MODULE_FLAT_LAYOUT 0x20u

/* ---- Interfaces --------------------------------------------------------- */

/* Every COM object starts with a pointer to its vtable; the first three slots
 * are IUnknown's. */
#define MDP_IUNKNOWN_SLOTS(Self)                                                                   \
    HRESULT (*QueryInterface)(Self * self, REFIID iid, void **out);                                \
    ULONG (*AddRef)(Self * self);                                                                  \
    ULONG (*Release)(Self * self);

typedef struct IUnknown IUnknown;
typedef struct IUnknownVtbl {
    MDP_IUNKNOWN_SLOTS(IUnknown)
} IUnknownVtbl;
struct IUnknown {
    const IUnknownVtbl *lpVtbl;
};

typedef struct IClassFactory IClassFactory;
typedef struct IClassFactoryVtbl {
    MDP_IUNKNOWN_SLOTS(IClassFactory)
    HRESULT (*CreateInstance)(IClassFactory *self, IUnknown *outer, REFIID iid, void **out);
    HRESULT (*LockServer)(IClassFactory *self, BOOL lock);
} IClassFactoryVtbl;
struct IClassFactory {
    const IClassFactoryVtbl *lpVtbl;
};

/* The enumerators share one shape: Skip, Reset, Clone, GetCount, Next. */
#define MDP_ENUM(Name, Item)                                                                       \
    typedef struct Name Name;                                                                      \
    typedef struct Name##Vtbl {                                                                    \
        MDP_IUNKNOWN_SLOTS(Name)                                                                   \
        HRESULT (*Skip)(Name * self, ULONG n);                                                     \
        HRESULT (*Reset)(Name * self);                                                             \
        HRESULT (*Clone)(Name * self, Name **out);                                                 \
        HRESULT (*GetCount)(Name * self, ULONG *n);                                                \
        HRESULT (*Next)(Name * self, ULONG cap, Item items[], ULONG *n);                           \
    } Name##Vtbl;                                                                                  \
    struct Name {                                                                                  \
        const Name##Vtbl *lpVtbl;                                                                  \
    };
MDP_ENUM(ICorProfilerFunctionEnum, COR_PRF_FUNCTION)
MDP_ENUM(ICorProfilerModuleEnum, ModuleID)
MDP_ENUM(ICorProfilerThreadEnum, ThreadID)
#undef MDP_ENUM

/* ICorProfilerCallback11 and every interface below it, one vtable. */
typedef struct ICorProfilerCallback ICorProfilerCallback;
#define MDP_CB_THIS ICorProfilerCallback *self
typedef struct ICorProfilerCallbackVtbl {
    MDP_IUNKNOWN_SLOTS(ICorProfilerCallback)
#define MDP_CB(ver, name, params) HRESULT(*name) params;
#include "callback.def"
#undef MDP_CB
} ICorProfilerCallbackVtbl;
struct ICorProfilerCallback {
    const ICorProfilerCallbackVtbl *lpVtbl;
};

/* ICorProfilerInfo15 and every interface below it, one vtable: a pointer
 * obtained for ICorProfilerInfoN may only use the slots of versions <= N. */
typedef struct ICorProfilerInfo ICorProfilerInfo;
#define MDP_INFO_THIS ICorProfilerInfo *self
typedef struct ICorProfilerInfoVtbl {
    MDP_IUNKNOWN_SLOTS(ICorProfilerInfo)
#define MDP_INFO(ver, name, params) HRESULT(*name) params;
#include "info.def"
#undef MDP_INFO
} ICorProfilerInfoVtbl;
struct ICorProfilerInfo {
    const ICorProfilerInfoVtbl *lpVtbl;
};

/* ---- IIDs (corprof.idl, unknwn.idl) -------------------------------------- */

#define MDP_GUID(a, b, c, d0, d1, d2, d3, d4, d5, d6, d7)                                          \
    {                                                                                              \
        a, b, c,                                                                                   \
        {                                                                                          \
            d0, d1, d2, d3, d4, d5, d6, d7                                                         \
        }                                                                                          \
    }

extern const IID mdp_IID_IUnknown;
extern const IID mdp_IID_IClassFactory;
/* [0] is ICorProfilerCallback, [10] ICorProfilerCallback11. */
extern const IID mdp_IID_ICorProfilerCallback[11];
/* [0] is ICorProfilerInfo, [14] ICorProfilerInfo15. */
extern const IID mdp_IID_ICorProfilerInfo[15];

int mdp_guid_equal(const GUID *a, const GUID *b);
/* "{xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx}" (38 characters + NUL). */
void mdp_guid_format(char out[39], const GUID *g);
/* Parse the text form (braces optional); 0 or -1. */
int mdp_guid_parse(GUID *out, const char *text);

#endif
