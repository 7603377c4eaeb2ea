/*
 * bench_power.cu - the SM clock and board power while cuops-bench times a
 * series, so that every row says at what clock it ran.
 *
 * Why: the compute-bound GEMM rows run against the board's power limit (on
 * the H200 at ~690 of 700 W the SM clock settles near 1.49 GHz for bf16
 * wgmma, against 1.98 GHz at the start of a series; docs/gemm.md "The power
 * limit"). Two kernels compared in one run are compared at the clock the
 * limit left each of them, and a TFLOP/s figure means little without it.
 *
 * How: a host thread reads NVML every BENCH_POWER_PERIOD_US while the series
 * runs (the SM clock, the power reading, the clock event reasons) and keeps
 * running sums (bv_power_acc_t, bench_validate.h); the row gets the means and
 * the share of samples held by power. NVML is opened with dlopen, and its few
 * entry points are declared here: the bench neither needs nvml.h to build nor
 * libnvidia-ml to load. The power reading is the driver's (an average over a
 * window of the order of a second on this GPU family), so for series shorter
 * than that it lags; the clock and the reasons are current. So the row also
 * gets the series' own mean power from the energy counter read at its start
 * and end (energy_watts), and the run the board's enforced power limit.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#define BENCH_POWER_PERIOD_US 5000

/* The NVML ABI used here (nvml.h): return code 0 is success, devices are
 * opaque handles, NVML_CLOCK_SM is 1. */
typedef int nvml_return_t;
typedef struct nvml_device *nvml_device_t;
#define BENCH_NVML_CLOCK_SM 1

typedef struct power_sampler {
    void *lib;
    nvml_device_t dev;
    nvml_return_t (*get_clock)(nvml_device_t, int, unsigned *);
    nvml_return_t (*get_power)(nvml_device_t, unsigned *);
    nvml_return_t (*get_reasons)(nvml_device_t, unsigned long long *);
    nvml_return_t (*get_energy)(nvml_device_t, unsigned long long *); /* mJ; may be NULL */
    nvml_return_t (*shutdown)(void);
    unsigned long long energy_begin; /* mJ at the series' start; 0: not read */
    double begin_seconds;
    pthread_t thread;
    int running;
    volatile int stop;
    bv_power_acc_t acc;
} power_sampler_t;

bench_power_t bench_power_none(void)
{
    bench_power_t p;
    p.samples = 0;
    p.sm_mhz = p.watts = p.power_limited = p.energy_watts = NAN;
    return p;
}

/* The energy counter in mJ, 0 where it cannot be read. */
static unsigned long long energy_now(const power_sampler_t *s)
{
    unsigned long long mj = 0;
    if (!s->get_energy || s->get_energy(s->dev, &mj) != 0) return 0;
    return mj;
}

static void sample_once(power_sampler_t *s)
{
    unsigned mhz = 0, mw = 0;
    unsigned long long reasons = 0;
    if (s->get_clock(s->dev, BENCH_NVML_CLOCK_SM, &mhz) != 0) return;
    if (s->get_power(s->dev, &mw) != 0) return;
    if (s->get_reasons && s->get_reasons(s->dev, &reasons) != 0) reasons = 0;
    bv_power_add(&s->acc, mhz, mw, reasons);
}

static void *sampler_main(void *arg)
{
    power_sampler_t *s = (power_sampler_t *)arg;
    while (!s->stop) {
        sample_once(s);
        usleep(BENCH_POWER_PERIOD_US);
    }
    return NULL;
}

void bench_power_init(bench_env_t *env)
{
    env->power_sampler = NULL;
    env->power_limit_w = NAN;
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "note: NVML not available (%s): rows carry no clock or power\n",
                dlerror());
        return;
    }
    typedef nvml_return_t (*init_fn)(void);
    typedef nvml_return_t (*by_bus_fn)(const char *, nvml_device_t *);
    init_fn init = (init_fn)dlsym(lib, "nvmlInit_v2");
    by_bus_fn by_bus = (by_bus_fn)dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
    power_sampler_t *s = (power_sampler_t *)calloc(1, sizeof(*s));
    if (!s) {
        dlclose(lib);
        return;
    }
    s->lib = lib;
    s->get_clock = (nvml_return_t(*)(nvml_device_t, int, unsigned *))dlsym(
        lib, "nvmlDeviceGetClockInfo");
    s->get_power =
        (nvml_return_t(*)(nvml_device_t, unsigned *))dlsym(lib, "nvmlDeviceGetPowerUsage");
    /* the newer name first; the older one is the same call */
    s->get_reasons = (nvml_return_t(*)(nvml_device_t, unsigned long long *))dlsym(
        lib, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!s->get_reasons)
        s->get_reasons = (nvml_return_t(*)(nvml_device_t, unsigned long long *))dlsym(
            lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
    s->get_energy = (nvml_return_t(*)(nvml_device_t, unsigned long long *))dlsym(
        lib, "nvmlDeviceGetTotalEnergyConsumption");
    nvml_return_t (*get_limit)(nvml_device_t, unsigned *) =
        (nvml_return_t(*)(nvml_device_t, unsigned *))dlsym(lib, "nvmlDeviceGetEnforcedPowerLimit");
    s->shutdown = (nvml_return_t(*)(void))dlsym(lib, "nvmlShutdown");
    char bus[32] = "";
    if (!init || !by_bus || !s->get_clock || !s->get_power || init() != 0 ||
        cudaDeviceGetPCIBusId(bus, (int)sizeof(bus), env->device) != cudaSuccess ||
        by_bus(bus, &s->dev) != 0) {
        fprintf(stderr, "note: NVML did not open device %d: rows carry no clock or power\n",
                env->device);
        if (s->shutdown && init) s->shutdown();
        dlclose(lib);
        free(s);
        return;
    }
    unsigned limit_mw = 0;
    if (get_limit && get_limit(s->dev, &limit_mw) == 0 && limit_mw > 0)
        env->power_limit_w = 1e-3 * (double)limit_mw;
    env->power_sampler = s;
}

void bench_power_fini(bench_env_t *env)
{
    power_sampler_t *s = (power_sampler_t *)env->power_sampler;
    if (!s) return;
    if (s->running) (void)bench_power_end(env);
    if (s->shutdown) s->shutdown();
    dlclose(s->lib);
    free(s);
    env->power_sampler = NULL;
}

void bench_power_begin(bench_env_t *env)
{
    power_sampler_t *s = (power_sampler_t *)env->power_sampler;
    if (!s || s->running) return;
    memset(&s->acc, 0, sizeof(s->acc));
    s->energy_begin = energy_now(s);
    s->begin_seconds = bench_host_seconds();
    s->stop = 0;
    s->running = pthread_create(&s->thread, NULL, sampler_main, s) == 0;
}

bench_power_t bench_power_end(bench_env_t *env)
{
    power_sampler_t *s = (power_sampler_t *)env->power_sampler;
    bench_power_t p = bench_power_none();
    if (!s || !s->running) return p;
    s->stop = 1;
    const unsigned long long energy_end = energy_now(s);
    const double seconds = bench_host_seconds() - s->begin_seconds;
    pthread_join(s->thread, NULL);
    s->running = 0;
    p.energy_watts = bv_energy_watts(s->energy_begin, energy_end, seconds);
    /* a series shorter than the period still gets its one reading */
    if (s->acc.samples == 0) sample_once(s);
    p.samples = s->acc.samples;
    bv_power_summary(&s->acc, &p.sm_mhz, &p.watts, &p.power_limited);
    return p;
}
