/*===- CudaApi.h - the few CUDA driver and nvJitLink declarations -*- C -*-===*\
|*                                                                            *|
|* The cuda backend never includes cuda.h or nvJitLink.h: CI machines may    *|
|* lack the toolkit, and the plugin links neither library (it opens both at   *|
|* run time). This header declares the handful of types, enumerator values    *|
|* and function pointer types the plugin uses. The values are the driver      *|
|* API's and nvJitLink's documented ABI (cuda.h and nvJitLink.h of CUDA 12.4  *|
|* to 13.0 agree on every one of them); they never change within a major      *|
|* version, and the names keep cuda.h's spelling so that a reader can check   *|
|* each against it. Entry points are resolved through cuGetProcAddress_v2     *|
|* with cudaVersion CUDA_API_VERSION_USED, which gives each name the ABI of   *|
|* that version (cuMemAlloc is cuMemAlloc_v2, and so on).                     *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef KJIT_PLUGINS_CUDA_CUDAAPI_H
#define KJIT_PLUGINS_CUDA_CUDAAPI_H

#include <stddef.h>
#include <stdint.h>

/** The ABI version every entry point is resolved for (CUDA 13.0). */
#define CUDA_API_VERSION_USED 13000

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef uint64_t CUdeviceptr; /* unsigned long long on every 64-bit ABI */
typedef struct CUuuid_st {
  char bytes[16];
} CUuuid;

/* CUresult values (cuda.h's cudaError_enum). */
enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_DEINITIALIZED = 4,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
  CUDA_ERROR_ECC_UNCORRECTABLE = 214,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
  CUDA_ERROR_LAUNCH_TIMEOUT = 702,
  CUDA_ERROR_ASSERT = 710,
  CUDA_ERROR_HARDWARE_STACK_ERROR = 714,
  CUDA_ERROR_ILLEGAL_INSTRUCTION = 715,
  CUDA_ERROR_MISALIGNED_ADDRESS = 716,
  CUDA_ERROR_INVALID_ADDRESS_SPACE = 717,
  CUDA_ERROR_INVALID_PC = 718,
  CUDA_ERROR_LAUNCH_FAILED = 719,
  CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE = 720,
  CUDA_ERROR_UNKNOWN = 999
};

/* CUdevice_attribute values. */
enum {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH = 95,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97
};

/* CUpointer_attribute values. */
enum { CU_POINTER_ATTRIBUTE_DEVICE_POINTER = 3 };

/* CUfunction_attribute values. */
enum { CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8 };

/* cuGetProcAddress flags and CUdriverProcAddressQueryResult values. */
enum {
  CU_GET_PROC_ADDRESS_DEFAULT = 0,
  CU_GET_PROC_ADDRESS_SUCCESS = 0,
  CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
  CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2
};

/* CUlaunchAttributeID values, and the layouts of cuLaunchKernelEx's
 * structs: an attribute is an id padded to 8 bytes and a 64-byte value. */
enum {
  CU_LAUNCH_ATTRIBUTE_COOPERATIVE = 2,
  CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4,
  CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6
};

typedef union CUlaunchAttributeValue {
  char pad[64];
  struct {
    unsigned int x, y, z;
  } clusterDim;
  int cooperative;
  int programmaticStreamSerializationAllowed;
} CUlaunchAttributeValue;

typedef struct CUlaunchAttribute {
  int id; /* CUlaunchAttributeID, an enum: int-sized */
  char pad[8 - sizeof(int)];
  CUlaunchAttributeValue value;
} CUlaunchAttribute;

typedef struct CUlaunchConfig {
  unsigned int gridDimX, gridDimY, gridDimZ;
  unsigned int blockDimX, blockDimY, blockDimZ;
  unsigned int sharedMemBytes;
  CUstream hStream;
  CUlaunchAttribute *attrs;
  unsigned int numAttrs;
} CUlaunchConfig;

/* The one symbol taken with dlsym; everything else comes through it. */
typedef CUresult (*cuGetProcAddress_v2_fn)(const char *symbol, void **pfn,
                                           int cudaVersion, uint64_t flags,
                                           int *symbolStatus);

/* Entry points, in the ABI of CUDA_API_VERSION_USED. */
typedef CUresult (*cuInit_fn)(unsigned int flags);
typedef CUresult (*cuDriverGetVersion_fn)(int *version);
typedef CUresult (*cuGetErrorName_fn)(CUresult error, const char **name);
typedef CUresult (*cuGetErrorString_fn)(CUresult error, const char **text);
typedef CUresult (*cuDeviceGetCount_fn)(int *count);
typedef CUresult (*cuDeviceGet_fn)(CUdevice *device, int ordinal);
typedef CUresult (*cuDeviceGetAttribute_fn)(int *value, int attribute,
                                            CUdevice device);
typedef CUresult (*cuDeviceGetUuid_fn)(CUuuid *uuid, CUdevice device);
typedef CUresult (*cuDevicePrimaryCtxRetain_fn)(CUcontext *ctx,
                                                CUdevice device);
typedef CUresult (*cuDevicePrimaryCtxRelease_fn)(CUdevice device);
typedef CUresult (*cuCtxGetCurrent_fn)(CUcontext *ctx);
typedef CUresult (*cuCtxSetCurrent_fn)(CUcontext ctx);
typedef CUresult (*cuModuleLoadData_fn)(CUmodule *module, const void *image);
typedef CUresult (*cuModuleUnload_fn)(CUmodule module);
typedef CUresult (*cuModuleGetFunction_fn)(CUfunction *function,
                                           CUmodule module, const char *name);
typedef CUresult (*cuFuncGetParamInfo_fn)(CUfunction function, size_t index,
                                          size_t *offset, size_t *size);
typedef CUresult (*cuFuncSetAttribute_fn)(CUfunction function, int attribute,
                                          int value);
typedef CUresult (*cuLaunchKernel_fn)(
    CUfunction f, unsigned int gridX, unsigned int gridY, unsigned int gridZ,
    unsigned int blockX, unsigned int blockY, unsigned int blockZ,
    unsigned int sharedMemBytes, CUstream stream, void **params, void **extra);
typedef CUresult (*cuLaunchKernelEx_fn)(const CUlaunchConfig *config,
                                        CUfunction f, void **params,
                                        void **extra);
typedef CUresult (*cuPointerGetAttribute_fn)(void *data, int attribute,
                                             CUdeviceptr pointer);
typedef CUresult (*cuStreamSynchronize_fn)(CUstream stream);
typedef CUresult (*cuMemAlloc_fn)(CUdeviceptr *pointer, size_t size);
typedef CUresult (*cuMemFree_fn)(CUdeviceptr pointer);
typedef CUresult (*cuMemcpyHtoDAsync_fn)(CUdeviceptr dst, const void *src,
                                         size_t size, CUstream stream);
typedef CUresult (*cuMemcpyDtoHAsync_fn)(void *dst, CUdeviceptr src,
                                         size_t size, CUstream stream);
/* Events and a private stream, for KJIT_LAUNCH_TIMED (Timing.c). */
enum { CU_STREAM_NON_BLOCKING = 0x1 };
typedef CUresult (*cuEventCreate_fn)(CUevent *event, unsigned int flags);
typedef CUresult (*cuEventDestroy_fn)(CUevent event);
typedef CUresult (*cuEventRecord_fn)(CUevent event, CUstream stream);
typedef CUresult (*cuEventSynchronize_fn)(CUevent event);
typedef CUresult (*cuEventQuery_fn)(CUevent event);
typedef CUresult (*cuEventElapsedTime_fn)(float *ms, CUevent start,
                                          CUevent end);
typedef CUresult (*cuStreamCreate_fn)(CUstream *stream, unsigned int flags);
typedef CUresult (*cuStreamDestroy_fn)(CUstream stream);

/* The driver's JIT linker (DriverLink.c): cuLinkCreate and cuLinkAddData
 * resolve to their _v2 ABI for CUDA 13.0. */
typedef struct CUlinkState_st *CUlinkState;
typedef int CUjit_option;   /* cuda.h's enum CUjit_option */
typedef int CUjitInputType; /* cuda.h's enum CUjitInputType */
enum {
  CU_JIT_INFO_LOG_BUFFER = 3,
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_JIT_TARGET = 9,
  CU_JIT_LOG_VERBOSE = 12
};
enum { CU_JIT_INPUT_PTX = 1 };
/* CUjit_target: the compute capability as a number (90), plus one of these
 * for the architecture-specific (sm_90a) and family (sm_100f) variants. */
enum {
  CU_COMPUTE_ACCELERATED_TARGET_BASE = 0x10000,
  CU_COMPUTE_FAMILY_TARGET_BASE = 0x20000
};
typedef CUresult (*cuLinkCreate_fn)(unsigned int numOptions,
                                    CUjit_option *options, void **values,
                                    CUlinkState *state);
typedef CUresult (*cuLinkAddData_fn)(CUlinkState state, CUjitInputType type,
                                     void *data, size_t size, const char *name,
                                     unsigned int numOptions,
                                     CUjit_option *options, void **values);
typedef CUresult (*cuLinkComplete_fn)(CUlinkState state, void **cubin,
                                      size_t *size);
typedef CUresult (*cuLinkDestroy_fn)(CUlinkState state);

/* nvJitLink (nvJitLink.h of CUDA 13): the header's inline wrappers call
 * these versioned symbols, which is what a binary built against it uses. */
typedef struct nvJitLink *nvJitLinkHandle;
typedef int nvJitLinkResult; /* NVJITLINK_SUCCESS = 0 */
enum { NVJITLINK_SUCCESS = 0, NVJITLINK_INPUT_PTX = 2 };
typedef nvJitLinkResult (*nvJitLinkCreate_fn)(nvJitLinkHandle *handle,
                                              uint32_t numOptions,
                                              const char **options);
typedef nvJitLinkResult (*nvJitLinkDestroy_fn)(nvJitLinkHandle *handle);
typedef nvJitLinkResult (*nvJitLinkAddData_fn)(nvJitLinkHandle handle,
                                               int inputType, const void *data,
                                               size_t size, const char *name);
typedef nvJitLinkResult (*nvJitLinkComplete_fn)(nvJitLinkHandle handle);
typedef nvJitLinkResult (*nvJitLinkGetSize_fn)(nvJitLinkHandle handle,
                                               size_t *size);
typedef nvJitLinkResult (*nvJitLinkGetBytes_fn)(nvJitLinkHandle handle,
                                                void *bytes);
typedef nvJitLinkResult (*nvJitLinkGetLog_fn)(nvJitLinkHandle handle,
                                              char *log);
typedef nvJitLinkResult (*nvJitLinkVersion_fn)(unsigned int *major,
                                               unsigned int *minor);

#endif /* KJIT_PLUGINS_CUDA_CUDAAPI_H */
