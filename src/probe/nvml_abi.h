/* SPDX-License-Identifier: MIT */
/* The subset of NVML's ABI that sparkops uses, declared here so that the
 * library is loaded at run time with dlopen and never linked at build time.
 * Layouts and version words follow nvml.h (API version 13, as published in
 * NVIDIA/go-nvml gen/nvml/nvml.h). Version words are sizeof(struct) | N << 24. */
#ifndef SP_NVML_ABI_H
#define SP_NVML_ABI_H

typedef int nvmlReturn_t;
#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_NO_PERMISSION 4
#define NVML_ERROR_NOT_FOUND 6
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_DRIVER_NOT_LOADED 9
#define NVML_ERROR_TIMEOUT 10
#define NVML_ERROR_LIBRARY_NOT_FOUND 12
#define NVML_ERROR_FUNCTION_NOT_FOUND 13
#define NVML_ERROR_GPU_IS_LOST 15
#define NVML_ERROR_ARGUMENT_VERSION_MISMATCH 25
#define NVML_ERROR_DEPRECATED 26
#define NVML_ERROR_UNKNOWN 999

typedef struct nvmlDevice_st *nvmlDevice_t;

#define NVML_TEMPERATURE_GPU 0
#define NVML_CLOCK_GRAPHICS 0
#define NVML_CLOCK_SM 1
#define NVML_CLOCK_MEM 2
#define NVML_PERF_POLICY_POWER 0
#define NVML_PERF_POLICY_THERMAL 1

#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96

typedef struct {
	unsigned long long total;
	unsigned long long free;
	unsigned long long used;
} nvmlMemory_t;

typedef struct {
	unsigned int version;
	unsigned long long total;
	unsigned long long reserved;
	unsigned long long free;
	unsigned long long used;
} nvmlMemory_v2_t;
#define NVML_STRUCT_VERSION(type, n) ((unsigned int)(sizeof(type) | ((n) << 24U)))
#define nvmlMemory_v2 NVML_STRUCT_VERSION(nvmlMemory_v2_t, 2) /* 0x02000028 */

typedef struct {
	unsigned int gpu;
	unsigned int memory;
} nvmlUtilization_t;

/* nvmlProcessInfo_v2_t, used by the _v2 and _v3 process queries */
typedef struct {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
} nvmlProcessInfo_t;

typedef struct {
	unsigned long long referenceTime; /* us */
	unsigned long long violationTime; /* ns */
} nvmlViolationTime_t;

typedef struct {
	unsigned int version;
	int sensorType;
	int temperature;
} nvmlTemperature_t;
#define nvmlTemperature_v1 NVML_STRUCT_VERSION(nvmlTemperature_t, 1)

typedef union {
	double dVal;
	unsigned int uiVal;
	unsigned long ulVal;
	unsigned long long ullVal;
	signed long long sllVal;
	signed int siVal;
	unsigned short usVal;
} nvmlValue_t;

typedef struct {
	unsigned int fieldId;
	unsigned int scopeId;
	long long timestamp;
	long long latencyUsec;
	int valueType;
	nvmlReturn_t nvmlReturn;
	nvmlValue_t value;
} nvmlFieldValue_t;

#define NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP 74
#define NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN 269
#define NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN 270
#define NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN 271

/* Signatures, as function pointer types. */
typedef nvmlReturn_t (*nvml_void_fn)(void);
typedef const char *(*nvml_errstr_fn)(nvmlReturn_t);
typedef nvmlReturn_t (*nvml_count_fn)(unsigned int *);
typedef nvmlReturn_t (*nvml_handle_fn)(unsigned int, nvmlDevice_t *);
typedef nvmlReturn_t (*nvml_str_fn)(nvmlDevice_t, char *, unsigned int);
typedef nvmlReturn_t (*nvml_sysstr_fn)(char *, unsigned int);
typedef nvmlReturn_t (*nvml_sysint_fn)(int *);
typedef nvmlReturn_t (*nvml_temp_fn)(nvmlDevice_t, int, unsigned int *);
typedef nvmlReturn_t (*nvml_tempv_fn)(nvmlDevice_t, nvmlTemperature_t *);
typedef nvmlReturn_t (*nvml_uint_fn)(nvmlDevice_t, unsigned int *);
typedef nvmlReturn_t (*nvml_ull_fn)(nvmlDevice_t, unsigned long long *);
typedef nvmlReturn_t (*nvml_clock_fn)(nvmlDevice_t, int, unsigned int *);
typedef nvmlReturn_t (*nvml_util_fn)(nvmlDevice_t, nvmlUtilization_t *);
typedef nvmlReturn_t (*nvml_mem_fn)(nvmlDevice_t, nvmlMemory_t *);
typedef nvmlReturn_t (*nvml_mem2_fn)(nvmlDevice_t, nvmlMemory_v2_t *);
typedef nvmlReturn_t (*nvml_procs_fn)(nvmlDevice_t, unsigned int *, nvmlProcessInfo_t *);
typedef nvmlReturn_t (*nvml_viol_fn)(nvmlDevice_t, int, nvmlViolationTime_t *);
typedef nvmlReturn_t (*nvml_fields_fn)(nvmlDevice_t, int, nvmlFieldValue_t *);
#endif
