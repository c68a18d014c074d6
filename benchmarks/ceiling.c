/* The memory ceiling of the CPU reduction benchmarks (bench_cpu_reductions.py): the same reductions as
   plain C loops that GCC vectorizes for this CPU (-O3 -march=native), split over the cores with OpenMP,
   several accumulators per thread. Not a baseline a user has: what the machine gives. Max skips
   NaN handling (poot's propagates NaN), which only makes this loop cheaper. */
#include <math.h>
#include <omp.h>

#define LANES 32   /* independent accumulators: the loop is bound by loads, not by add latency */

static float fold_sum(const float *a, long n) {
    float acc[LANES] = {0};
    long i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int k = 0; k < LANES; k++) acc[k] += a[i + k];
    float s = 0;
    for (int k = 0; k < LANES; k++) s += acc[k];
    for (; i < n; i++) s += a[i];
    return s;
}

static float fold_max(const float *a, long n) {
    float acc[LANES];
    for (int k = 0; k < LANES; k++) acc[k] = -INFINITY;
    long i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int k = 0; k < LANES; k++) acc[k] = acc[k] > a[i + k] ? acc[k] : a[i + k];
    float m = -INFINITY;
    for (int k = 0; k < LANES; k++) m = m > acc[k] ? m : acc[k];
    for (; i < n; i++) m = m > a[i] ? m : a[i];
    return m;
}

float full_reduce(const float *a, long n, int is_max) {
    float parts[256];
    int used = 1;
    #pragma omp parallel
    {
        int t = omp_get_thread_num(), T = omp_get_num_threads();
        long lo = n * t / T, hi = n * (t + 1) / T;
        parts[t] = is_max ? fold_max(a + lo, hi - lo) : fold_sum(a + lo, hi - lo);
        if (t == 0) used = T;
    }
    float r = parts[0];
    for (int t = 1; t < used; t++) r = is_max ? (r > parts[t] ? r : parts[t]) : r + parts[t];
    return r;
}

/* along axis 1 (each row folded) or axis 0 (rows folded into a row of accumulators per thread block) */
void axis_reduce(const float *a, long rows, long cols, int axis, int is_max, float *out) {
    if (axis == 1) {
        #pragma omp parallel for schedule(static)
        for (long r = 0; r < rows; r++)
            out[r] = is_max ? fold_max(a + r * cols, cols) : fold_sum(a + r * cols, cols);
        return;
    }
    #pragma omp parallel
    {
        int t = omp_get_thread_num(), T = omp_get_num_threads();
        long c0 = cols * t / T, c1 = cols * (t + 1) / T;
        for (long c = c0; c < c1; c++) out[c] = is_max ? -INFINITY : 0.0f;
        for (long r = 0; r < rows; r++) {
            const float *row = a + r * cols;
            if (is_max)
                for (long c = c0; c < c1; c++) out[c] = out[c] > row[c] ? out[c] : row[c];
            else
                for (long c = c0; c < c1; c++) out[c] += row[c];
        }
    }
}
