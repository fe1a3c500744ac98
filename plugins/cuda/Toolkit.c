/*===- Toolkit.c - CUDA toolkit discovery and the two finalizers --*- C -*-===*\
|*                                                                            *|
|* The toolkit is found once per process: KJIT_CUDA_HOME, CUDA_HOME,          *|
|* CUDA_PATH, else /usr/local/cuda. From it come ptxas (bin/ptxas, or         *|
|* KJIT_CUDA_PTXAS), libdevice (nvvm/libdevice/libdevice.10.bc) and           *|
|* nvJitLink (KJIT_CUDA_NVJITLINK, else lib64/libnvJitLink.so.13, else the    *|
|* loader's default path).                                                    *|
|*                                                                            *|
|* These variables are the plugin's own: the values of those set join the     *|
|* fingerprint (fingerprint_environment), and the disk cache knows none.      *|
|*                                                                            *|
|* PTX becomes a cubin through one of two finalizers (KJIT_CUDA_FINALIZER):   *|
|* ptxas as a child process, whose fixed cost is a process start, or          *|
|* nvJitLink in process, whose fixed cost is opening a 100 MB library once.   *|
|* "auto" (the default) uses ptxas for the first kernel of a process, opens   *|
|* nvJitLink in the background meanwhile, and uses it once it is ready        *|
|* (docs/CudaBackend.md has the measurements behind this).                    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#define _GNU_SOURCE 1

#include "Internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

enum { CUDA_PATH_MAX = 4096 };

/*===----------------------------------------------------------------------===*\
|* Discovery                                                                  *|
\*===----------------------------------------------------------------------===*/

static struct {
  char home[CUDA_PATH_MAX];
  const char *home_from; /* "KJIT_CUDA_HOME", ..., or "the default" */
  char ptxas[CUDA_PATH_MAX];
  const char *ptxas_from;        /* "KJIT_CUDA_PTXAS" or NULL (the toolkit's) */
  char nvjitlink[CUDA_PATH_MAX]; /* KJIT_CUDA_NVJITLINK, or "" */
  int has_ptxas;
  char libdevice[CUDA_PATH_MAX];
  int has_libdevice;
  char finalizer[32];     /* KJIT_CUDA_FINALIZER as given ("" = auto) */
  int policy;             /* -1: bad KJIT_CUDA_FINALIZER */
  char environment[8192]; /* the fingerprint's env= part */
} tk;

/* The variables whose values decide the code this backend produces: the
 * toolkit, the ptxas and nvJitLink it finalizes with, the finalizer. Each
 * one set (and not empty) joins the fingerprint by its value, so that a
 * changed one is a new cache key; the disk cache and the runtime know none
 * of them (test/Cache/env-registry.test reads this list). */
static const char *const fingerprint_environment[] = {
    "KJIT_CUDA_HOME",  "CUDA_HOME",           "CUDA_PATH",
    "KJIT_CUDA_PTXAS", "KJIT_CUDA_NVJITLINK", "KJIT_CUDA_FINALIZER"};

static pthread_once_t toolkit_once = PTHREAD_ONCE_INIT;

static int is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* "NAME=value,..." of the variables of fingerprint_environment that are
 * set, in the list's order; ',', ';', '%' and control bytes in a value are
 * written %XX, so that no two environments give one text. Values longer
 * than the buffer holds (paths of kilobytes) give "fnv1a:" and the 64-bit
 * FNV-1a of every NAME=value instead. */
static void environment_text(void) {
  size_t i, used = 0, size = sizeof tk.environment;
  uint64_t hash = 14695981039346656037ull;
  const char *v, *p;
  int overflow = 0;
  for (i = 0; i < sizeof fingerprint_environment / sizeof(char *); ++i) {
    if (!(v = getenv(fingerprint_environment[i])) || !*v)
      continue;
    for (p = fingerprint_environment[i]; *p; ++p)
      hash = (hash ^ (unsigned char)*p) * 1099511628211ull;
    hash = (hash ^ '=') * 1099511628211ull;
    for (p = v; *p; ++p)
      hash = (hash ^ (unsigned char)*p) * 1099511628211ull;
    hash = (hash ^ 0) * 1099511628211ull;
    if (overflow)
      continue;
    if (used + strlen(fingerprint_environment[i]) + 2 + 3 * strlen(v) >= size) {
      overflow = 1;
      continue;
    }
    used +=
        (size_t)snprintf(tk.environment + used, size - used,
                         "%s%s=", used ? "," : "", fingerprint_environment[i]);
    for (p = v; *p; ++p) {
      unsigned char c = (unsigned char)*p;
      if (c < 0x20 || c == 0x7f || c == ',' || c == ';' || c == '%')
        used +=
            (size_t)snprintf(tk.environment + used, size - used, "%%%02X", c);
      else
        tk.environment[used++] = (char)c;
    }
  }
  tk.environment[used] = '\0';
  if (overflow)
    snprintf(tk.environment, size, "fnv1a:%016llx", (unsigned long long)hash);
}

static void find_toolkit(void) {
  static const char *const vars[] = {"KJIT_CUDA_HOME", "CUDA_HOME",
                                     "CUDA_PATH"};
  const char *v;
  size_t i;
  environment_text();
  snprintf(tk.home, sizeof tk.home, "/usr/local/cuda");
  tk.home_from = "the default";
  for (i = 0; i < sizeof vars / sizeof vars[0]; ++i)
    if ((v = getenv(vars[i])) && *v) {
      snprintf(tk.home, sizeof tk.home, "%s", v);
      tk.home_from = vars[i];
      break;
    }
  if ((v = getenv("KJIT_CUDA_PTXAS")) && *v) {
    snprintf(tk.ptxas, sizeof tk.ptxas, "%s", v);
    tk.ptxas_from = "KJIT_CUDA_PTXAS";
  } else {
    snprintf(tk.ptxas, sizeof tk.ptxas, "%s/bin/ptxas", tk.home);
  }
  tk.has_ptxas = access(tk.ptxas, X_OK) == 0 && is_file(tk.ptxas);
  if ((v = getenv("KJIT_CUDA_NVJITLINK")) && *v)
    snprintf(tk.nvjitlink, sizeof tk.nvjitlink, "%s", v);
  snprintf(tk.libdevice, sizeof tk.libdevice,
           "%s/nvvm/libdevice/libdevice.10.bc", tk.home);
  tk.has_libdevice = is_file(tk.libdevice);
  v = getenv("KJIT_CUDA_FINALIZER");
  snprintf(tk.finalizer, sizeof tk.finalizer, "%s", v ? v : "");
  if (!v || !*v || strcmp(v, "auto") == 0)
    tk.policy = CUDA_FINALIZER_AUTO;
  else if (strcmp(v, "ptxas") == 0)
    tk.policy = CUDA_FINALIZER_PTXAS;
  else if (strcmp(v, "nvjitlink") == 0)
    tk.policy = CUDA_FINALIZER_NVJITLINK;
  else if (strcmp(v, "driver") == 0)
    tk.policy = CUDA_FINALIZER_DRIVER;
  else
    tk.policy = -1;
}

void cuda_toolkit_init(void) { pthread_once(&toolkit_once, find_toolkit); }

kjit_status *cuda_finalizer_policy(int *policy) {
  cuda_toolkit_init();
  if (tk.policy < 0)
    return cuda_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "KJIT_CUDA_FINALIZER is '%s'; expected auto, driver, "
                      "ptxas or nvjitlink",
                      tk.finalizer);
  *policy = tk.policy;
  return NULL;
}

const char *cuda_libdevice_path(void) {
  cuda_toolkit_init();
  return tk.has_libdevice ? tk.libdevice : NULL;
}

/* "the CUDA toolkit at X (from CUDA_HOME)", for messages. */
static void describe_home(char *buf, size_t size) {
  snprintf(buf, size, "the CUDA toolkit at %s (from %s)", tk.home,
           tk.home_from);
}

static void describe_ptxas_missing(char *buf, size_t size) {
  char home[CUDA_PATH_MAX + 64];
  describe_home(home, sizeof home);
  if (tk.ptxas_from)
    snprintf(buf, size, "ptxas %s (from KJIT_CUDA_PTXAS) is not an executable",
             tk.ptxas);
  else
    snprintf(buf, size, "%s has no executable bin/ptxas", home);
}

/*===----------------------------------------------------------------------===*\
|* nvJitLink, opened once (in the background under "auto")                    *|
\*===----------------------------------------------------------------------===*/

enum { NVJ_NOT_STARTED, NVJ_LOADING, NVJ_READY, NVJ_FAILED };

static struct {
  pthread_mutex_t lock;
  pthread_cond_t done;
  int state;
  /* The thread opening it in the background, joined by the last fini: one
   * still running at exit (a detached one, as it was) would be found by
   * LeakSanitizer holding dlerror's buffer, or run while the process
   * tears down. Under lock. */
  pthread_t thread;
  int thread_started;
  char path[CUDA_PATH_MAX]; /* what dlopen opened */
  char error[2048];
  uint64_t load_ns;
  nvJitLinkCreate_fn create;
  nvJitLinkDestroy_fn destroy;
  nvJitLinkAddData_fn add_data;
  nvJitLinkComplete_fn complete;
  nvJitLinkGetSize_fn cubin_size;
  nvJitLinkGetBytes_fn cubin;
  nvJitLinkGetSize_fn error_log_size;
  nvJitLinkGetLog_fn error_log;
  nvJitLinkGetSize_fn info_log_size; /* may be NULL */
  nvJitLinkGetLog_fn info_log;       /* may be NULL */
} nvj = {.lock = PTHREAD_MUTEX_INITIALIZER,
         .done = PTHREAD_COND_INITIALIZER,
         .state = NVJ_NOT_STARTED};

/* Candidates: the toolkit's lib64 and lib, then the loader's path. */
static void *open_nvjitlink(char *tried, size_t size) {
  const char *const dirs[] = {"lib64", "lib"};
  char path[CUDA_PATH_MAX + 64];
  size_t i, used = 0;
  void *dl;
  tried[0] = '\0';
  if (tk.nvjitlink[0]) { /* KJIT_CUDA_NVJITLINK: that file, nothing else */
    if ((dl = dlopen(tk.nvjitlink, RTLD_NOW | RTLD_LOCAL))) {
      snprintf(nvj.path, sizeof nvj.path, "%s", tk.nvjitlink);
      return dl;
    }
    snprintf(tried, size, "%s from KJIT_CUDA_NVJITLINK (%s)", tk.nvjitlink,
             dlerror());
    return NULL;
  }
  for (i = 0; i < 2; ++i) {
    snprintf(path, sizeof path, "%s/%s/libnvJitLink.so.13", tk.home, dirs[i]);
    if (!is_file(path))
      continue;
    if ((dl = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
      snprintf(nvj.path, sizeof nvj.path, "%s", path);
      return dl;
    }
    used += (size_t)snprintf(tried + used, used < size ? size - used : 0,
                             "%s (%s); ", path, dlerror());
  }
  if ((dl = dlopen("libnvJitLink.so.13", RTLD_NOW | RTLD_LOCAL))) {
    snprintf(nvj.path, sizeof nvj.path, "libnvJitLink.so.13");
    return dl;
  }
  snprintf(tried + (used < size ? used : size - 1),
           used < size ? size - used : 1, "libnvJitLink.so.13 (%s)", dlerror());
  return NULL;
}

static void load_nvjitlink(void) {
  char tried[1536], home[CUDA_PATH_MAX + 64];
  uint64_t start = cuda_now_ns();
  void *dl = open_nvjitlink(tried, sizeof tried);
  void *fn[8];
  const char *names[8] = {"__nvJitLinkCreate_13_0",
                          "__nvJitLinkDestroy_13_0",
                          "__nvJitLinkAddData_13_0",
                          "__nvJitLinkComplete_13_0",
                          "__nvJitLinkGetLinkedCubinSize_13_0",
                          "__nvJitLinkGetLinkedCubin_13_0",
                          "__nvJitLinkGetErrorLogSize_13_0",
                          "__nvJitLinkGetErrorLog_13_0"};
  int i, state = NVJ_READY;
  if (!dl && tk.nvjitlink[0]) {
    snprintf(nvj.error, sizeof nvj.error, "nvJitLink cannot be opened: %s",
             tried);
    state = NVJ_FAILED;
  } else if (!dl) {
    describe_home(home, sizeof home);
    snprintf(nvj.error, sizeof nvj.error,
             "nvJitLink cannot be opened: %s has no lib64/libnvJitLink.so.13 "
             "that loads, nor has the loader's path one (tried: %s)",
             home, tried);
    state = NVJ_FAILED;
  } else {
    for (i = 0; i < 8 && state == NVJ_READY; ++i)
      if (!(fn[i] = dlsym(dl, names[i]))) {
        snprintf(nvj.error, sizeof nvj.error,
                 "nvJitLink %s has no symbol %s (not nvJitLink of CUDA 13)",
                 nvj.path, names[i]);
        state = NVJ_FAILED;
      }
    if (state == NVJ_READY) {
      memcpy(&nvj.create, &fn[0], sizeof fn[0]);
      memcpy(&nvj.destroy, &fn[1], sizeof fn[1]);
      memcpy(&nvj.add_data, &fn[2], sizeof fn[2]);
      memcpy(&nvj.complete, &fn[3], sizeof fn[3]);
      memcpy(&nvj.cubin_size, &fn[4], sizeof fn[4]);
      memcpy(&nvj.cubin, &fn[5], sizeof fn[5]);
      memcpy(&nvj.error_log_size, &fn[6], sizeof fn[6]);
      memcpy(&nvj.error_log, &fn[7], sizeof fn[7]);
      /* Optional: without them finalize reports nothing. */
      fn[0] = dlsym(dl, "__nvJitLinkGetInfoLogSize_13_0");
      fn[1] = dlsym(dl, "__nvJitLinkGetInfoLog_13_0");
      memcpy(&nvj.info_log_size, &fn[0], sizeof fn[0]);
      memcpy(&nvj.info_log, &fn[1], sizeof fn[1]);
    }
  }
  pthread_mutex_lock(&nvj.lock);
  nvj.load_ns = cuda_now_ns() - start;
  nvj.state = state;
  pthread_cond_broadcast(&nvj.done);
  pthread_mutex_unlock(&nvj.lock);
}

static void *nvjitlink_thread(void *unused) {
  (void)unused;
  load_nvjitlink();
  return NULL;
}

/* Starts opening nvJitLink; in the background when `background`. */
static void start_nvjitlink(int background) {
  int start, in_background = 0;
  pthread_mutex_lock(&nvj.lock);
  start = nvj.state == NVJ_NOT_STARTED;
  if (start) {
    nvj.state = NVJ_LOADING;
    if (background)
      in_background = nvj.thread_started =
          pthread_create(&nvj.thread, NULL, nvjitlink_thread, NULL) == 0;
  }
  pthread_mutex_unlock(&nvj.lock);
  if (start && !in_background)
    load_nvjitlink();
}

/* The state, without waiting (wait = 0) or once loading has ended. */
static int nvjitlink_state(int wait) {
  int state;
  pthread_mutex_lock(&nvj.lock);
  while (wait && nvj.state == NVJ_LOADING)
    pthread_cond_wait(&nvj.done, &nvj.lock);
  state = nvj.state;
  pthread_mutex_unlock(&nvj.lock);
  return state;
}

/*===----------------------------------------------------------------------===*\
|* Fingerprint                                                                *|
\*===----------------------------------------------------------------------===*/

static pthread_once_t fingerprint_once = PTHREAD_ONCE_INIT;
static char fingerprint[512];

/* A file's identity without running or reading it: size and mtime (which
 * package managers keep, so machines with the same toolkit agree). */
void cuda_file_identity(const char *path, char *buf, size_t size) {
  struct stat st;
  if (stat(path, &st) != 0) {
    snprintf(buf, size, "missing");
    return;
  }
  snprintf(buf, size, "size:%lld,mtime:%lld.%09ld", (long long)st.st_size,
           (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
}

static void nvjitlink_candidate(char *buf, size_t size) {
  const char *const dirs[] = {"lib64", "lib"};
  int i;
  if (tk.nvjitlink[0]) {
    snprintf(buf, size, "%s", tk.nvjitlink);
    return;
  }
  for (i = 0; i < 2; ++i) {
    snprintf(buf, size, "%s/%s/libnvJitLink.so.13", tk.home, dirs[i]);
    if (is_file(buf))
      return;
  }
  buf[0] = '\0';
}

static void build_fingerprint(void) {
  char ptxas[128] = "unused", nvjitlink[128] = "unused";
  char libdevice[128] = "none", path[CUDA_PATH_MAX];
  /* Each toolkit finalizer the policy may use (the driver's part is added
   * by cuda_toolkit_fingerprint). */
  if (tk.policy == CUDA_FINALIZER_AUTO || tk.policy == CUDA_FINALIZER_PTXAS)
    cuda_file_identity(tk.ptxas, ptxas, sizeof ptxas);
  if (tk.policy == CUDA_FINALIZER_AUTO ||
      tk.policy == CUDA_FINALIZER_NVJITLINK) {
    nvjitlink_candidate(path, sizeof path);
    if (path[0])
      cuda_file_identity(path, nvjitlink, sizeof nvjitlink);
    else
      snprintf(nvjitlink, sizeof nvjitlink, "default-path");
  }
  /* libdevice, like ptxas, by size and mtime: hashing its 470 KB cost a
   * warm process 2-6 ms before its first launch, in processes (PyTorch's)
   * whose CUDA context already exists, so that nothing overlapped it. */
  if (tk.has_libdevice)
    cuda_file_identity(tk.libdevice, libdevice, sizeof libdevice);
  snprintf(fingerprint, sizeof fingerprint,
           "ptxas=%s;nvjitlink=%s;libdevice=%s", ptxas, nvjitlink, libdevice);
}

void cuda_toolkit_join(void) {
  pthread_t nvjitlink;
  int started;
  pthread_mutex_lock(&nvj.lock);
  started = nvj.thread_started;
  nvjitlink = nvj.thread;
  nvj.thread_started = 0;
  pthread_mutex_unlock(&nvj.lock);
  if (started)
    pthread_join(nvjitlink, NULL);
}

kjit_status *cuda_toolkit_fingerprint(char **text) {
  static const char *const names[] = {"auto", "ptxas", "nvjitlink", "driver"};
  char driver[160] = "unused";
  kjit_status *status;
  int policy = CUDA_FINALIZER_AUTO;
  size_t size;
  if ((status = cuda_finalizer_policy(&policy)))
    return status;
  pthread_once(&fingerprint_once, build_fingerprint);
  /* The driver's JIT linker assembles with the driver's own ptxas, so the
   * driver's version is part of its cubins; auto may use it only when the
   * toolkit has no ptxas (cuda_finalize_ptx). Asked here, when the
   * fingerprint is: a process that never asks for a cuda fingerprint never
   * initializes the driver. */
  if (policy == CUDA_FINALIZER_DRIVER ||
      (policy == CUDA_FINALIZER_AUTO && !tk.has_ptxas))
    cuda_driver_identity(driver, sizeof driver);
  size = strlen(driver) + strlen(fingerprint) + strlen(tk.environment) + 64;
  if (!(*text = malloc(size)))
    return cuda_error(KJIT_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  snprintf(*text, size, "finalizer=%s;driver=%s;%s;env=%s", names[policy],
           driver, fingerprint, tk.environment);
  return NULL;
}

/*===----------------------------------------------------------------------===*\
|* ptxas                                                                      *|
\*===----------------------------------------------------------------------===*/

static int write_file(const char *path, const void *data, size_t size) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  const char *p = data;
  if (fd < 0)
    return -1;
  while (size) {
    ssize_t n = write(fd, p, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      close(fd);
      return -1;
    }
    p += n;
    size -= (size_t)n;
  }
  return close(fd);
}

/* Reads a whole file (malloc'd, NUL-terminated); NULL when it cannot. */
static uint8_t *read_file(const char *path, size_t *size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  uint8_t *bytes;
  size_t used = 0;
  if (fd < 0)
    return NULL;
  if (fstat(fd, &st) != 0 || !(bytes = malloc((size_t)st.st_size + 1))) {
    close(fd);
    return NULL;
  }
  while (used < (size_t)st.st_size) {
    ssize_t n = read(fd, bytes + used, (size_t)st.st_size - used);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    used += (size_t)n;
  }
  close(fd);
  bytes[used] = '\0';
  *size = used;
  return bytes;
}

/* The log without trailing newlines, at most `max` bytes of it. */
static int log_len(const char *log, size_t size) {
  while (size && (log[size - 1] == '\n' || log[size - 1] == '\r'))
    --size;
  return (int)(size > 16384 ? 16384 : size);
}

static kjit_status *run_ptxas(const char *ptx, size_t ptx_size,
                              const char *arch, const char *kernel,
                              uint8_t **cubin, size_t *cubin_size,
                              char **report) {
  const char *tmp = getenv("TMPDIR");
  char dir[CUDA_PATH_MAX], in[CUDA_PATH_MAX + 16], out[CUDA_PATH_MAX + 16];
  char log[CUDA_PATH_MAX + 16], arch_flag[32];
  char *argv[8];
  posix_spawn_file_actions_t actions;
  kjit_status *status = NULL;
  uint8_t *log_bytes = NULL;
  size_t log_size = 0;
  pid_t pid;
  int rc, wstatus = 0;
  if (!tmp || !*tmp)
    tmp = "/tmp";
  snprintf(dir, sizeof dir, "%s/kjit-cuda-XXXXXX", tmp);
  if (!mkdtemp(dir))
    return cuda_error(KJIT_STATUS_UNAVAILABLE,
                      "finalize of kernel '%s' for %s: cannot create a "
                      "temporary directory in %s: %s",
                      kernel, arch, tmp, strerror(errno));
  snprintf(in, sizeof in, "%s/kernel.ptx", dir);
  snprintf(out, sizeof out, "%s/kernel.cubin", dir);
  snprintf(log, sizeof log, "%s/ptxas.log", dir);
  snprintf(arch_flag, sizeof arch_flag, "-arch=%s", arch);
  if (write_file(in, ptx, ptx_size) != 0) {
    status = cuda_error(KJIT_STATUS_UNAVAILABLE,
                        "finalize of kernel '%s' for %s: cannot write %s: %s",
                        kernel, arch, in, strerror(errno));
    goto cleanup;
  }
  argv[0] = tk.ptxas;
  argv[1] = arch_flag;
  argv[2] = "-O3";
  argv[3] = "-v"; /* the report: registers, spills (PtxasReport.c) */
  argv[4] = in;
  argv[5] = "-o";
  argv[6] = out;
  argv[7] = NULL;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log,
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  rc = posix_spawn(&pid, tk.ptxas, &actions, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    status = cuda_error(KJIT_STATUS_UNAVAILABLE,
                        "finalize of kernel '%s' for %s: cannot run ptxas "
                        "%s: %s",
                        kernel, arch, tk.ptxas, strerror(rc));
    goto cleanup;
  }
  while (waitpid(pid, &wstatus, 0) < 0)
    if (errno != EINTR) {
      status = cuda_error(KJIT_STATUS_INTERNAL,
                          "finalize of kernel '%s' for %s: waiting for ptxas "
                          "failed: %s",
                          kernel, arch, strerror(errno));
      goto cleanup;
    }
  log_bytes = read_file(log, &log_size);
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    char how[64];
    if (WIFEXITED(wstatus))
      snprintf(how, sizeof how, "exit status %d", WEXITSTATUS(wstatus));
    else
      snprintf(how, sizeof how, "signal %d",
               WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0);
    status = cuda_error(KJIT_STATUS_INVALID_ARGUMENT,
                        "finalize of kernel '%s' for %s: ptxas %s failed "
                        "(%s):\n%.*s",
                        kernel, arch, tk.ptxas, how,
                        log_bytes ? log_len((char *)log_bytes, log_size) : 0,
                        log_bytes ? (char *)log_bytes : "");
    goto cleanup;
  }
  if (!(*cubin = read_file(out, cubin_size)) || *cubin_size == 0) {
    free(*cubin);
    *cubin = NULL;
    status = cuda_error(KJIT_STATUS_INTERNAL,
                        "finalize of kernel '%s' for %s: ptxas %s exited with "
                        "0 but wrote no cubin",
                        kernel, arch, tk.ptxas);
  } else if (log_bytes) {
    *report = (char *)log_bytes; /* NUL-terminated by read_file */
    log_bytes = NULL;
  }
cleanup:
  free(log_bytes);
  unlink(in);
  unlink(out);
  unlink(log);
  rmdir(dir);
  return status;
}

/*===----------------------------------------------------------------------===*\
|* nvJitLink                                                                  *|
\*===----------------------------------------------------------------------===*/

static const char *nvjitlink_result_name(nvJitLinkResult r) {
  static const char *const names[] = {"NVJITLINK_SUCCESS",
                                      "NVJITLINK_ERROR_UNRECOGNIZED_OPTION",
                                      "NVJITLINK_ERROR_MISSING_ARCH",
                                      "NVJITLINK_ERROR_INVALID_INPUT",
                                      "NVJITLINK_ERROR_PTX_COMPILE",
                                      "NVJITLINK_ERROR_NVVM_COMPILE",
                                      "NVJITLINK_ERROR_INTERNAL",
                                      "NVJITLINK_ERROR_THREADPOOL",
                                      "NVJITLINK_ERROR_UNRECOGNIZED_INPUT",
                                      "NVJITLINK_ERROR_FINALIZE",
                                      "NVJITLINK_ERROR_NULL_INPUT",
                                      "NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS",
                                      "NVJITLINK_ERROR_INCORRECT_INPUT_TYPE",
                                      "NVJITLINK_ERROR_ARCH_MISMATCH",
                                      "NVJITLINK_ERROR_OUTDATED_LIBRARY",
                                      "NVJITLINK_ERROR_MISSING_FATBIN",
                                      "NVJITLINK_ERROR_UNRECOGNIZED_ARCH",
                                      "NVJITLINK_ERROR_UNSUPPORTED_ARCH",
                                      "NVJITLINK_ERROR_LTO_NOT_ENABLED"};
  if (r >= 0 && (size_t)r < sizeof names / sizeof names[0])
    return names[r];
  return "an unknown nvJitLink result";
}

static kjit_status *run_nvjitlink(const char *ptx, size_t ptx_size,
                                  const char *arch, const char *kernel,
                                  uint8_t **cubin, size_t *cubin_size,
                                  char **report) {
  char arch_flag[32];
  const char *options[3];
  nvJitLinkHandle handle = NULL;
  nvJitLinkResult r;
  const char *step;
  kjit_status *status = NULL;
  size_t size = 0;
  snprintf(arch_flag, sizeof arch_flag, "-arch=%s", arch);
  options[0] = arch_flag;
  options[1] = "-O3";
  options[2] = "-verbose"; /* the report (PtxasReport.c) */
  step = "nvJitLinkCreate";
  if ((r = nvj.create(&handle, 3, options)) != NVJITLINK_SUCCESS)
    goto fail;
  step = "nvJitLinkAddData";
  if ((r = nvj.add_data(handle, NVJITLINK_INPUT_PTX, ptx, ptx_size,
                        "kernel.ptx")) != NVJITLINK_SUCCESS)
    goto fail;
  step = "nvJitLinkComplete";
  if ((r = nvj.complete(handle)) != NVJITLINK_SUCCESS)
    goto fail;
  step = "nvJitLinkGetLinkedCubinSize";
  if ((r = nvj.cubin_size(handle, &size)) != NVJITLINK_SUCCESS)
    goto fail;
  if (!(*cubin = malloc(size ? size : 1))) {
    nvj.destroy(&handle);
    return cuda_error(KJIT_STATUS_RESOURCE_EXHAUSTED,
                      "finalize of kernel '%s': out of memory", kernel);
  }
  step = "nvJitLinkGetLinkedCubin";
  if ((r = nvj.cubin(handle, *cubin)) != NVJITLINK_SUCCESS) {
    free(*cubin);
    *cubin = NULL;
    goto fail;
  }
  *cubin_size = size;
  if (nvj.info_log_size && nvj.info_log &&
      nvj.info_log_size(handle, &size) == NVJITLINK_SUCCESS && size &&
      (*report = malloc(size + 1))) {
    if (nvj.info_log(handle, *report) != NVJITLINK_SUCCESS)
      (*report)[0] = '\0';
    (*report)[size] = '\0';
  }
  nvj.destroy(&handle);
  return NULL;
fail: {
  char *log = NULL;
  size_t log_size = 0;
  if (handle && nvj.error_log_size(handle, &log_size) == NVJITLINK_SUCCESS &&
      log_size && (log = malloc(log_size + 1))) {
    if (nvj.error_log(handle, log) != NVJITLINK_SUCCESS)
      log[0] = '\0';
    log[log_size] = '\0';
  }
  status = cuda_error(
      KJIT_STATUS_INVALID_ARGUMENT,
      "finalize of kernel '%s' for %s: nvJitLink (%s) failed in %s: %s "
      "(%d)%s%.*s",
      kernel, arch, nvj.path, step, nvjitlink_result_name(r), (int)r,
      log && log[0] ? ":\n" : "", log ? log_len(log, strlen(log)) : 0,
      log ? log : "");
  free(log);
  if (handle)
    nvj.destroy(&handle);
  return status;
}
}

/*===----------------------------------------------------------------------===*\
|* The policy                                                                 *|
\*===----------------------------------------------------------------------===*/

static uint64_t finalize_count;   /* atomic: kernels finalized so far */
static uint64_t finalize_started; /* atomic: finalizes begun so far */

enum { USE_PTXAS, USE_NVJITLINK, USE_DRIVER };

/* The toolkit's choice under auto: the first kernel of the process goes to
 * ptxas (a process start is cheaper than opening nvJitLink and its first
 * link), and opening nvJitLink starts now, in the background; later kernels
 * take nvJitLink once it is open, ptxas until then. Without ptxas it waits
 * for nvJitLink; -1 when that cannot be opened either. */
static int choose_in_toolkit(const char **waited) {
  int first, state;
  start_nvjitlink(1);
  first = __atomic_fetch_add(&finalize_started, 1, __ATOMIC_RELAXED) == 0;
  state = first && tk.has_ptxas ? NVJ_LOADING : nvjitlink_state(!tk.has_ptxas);
  if (state == NVJ_READY) {
    if (!tk.has_ptxas)
      *waited = ", after waiting for nvJitLink to open";
    return USE_NVJITLINK;
  }
  return tk.has_ptxas ? USE_PTXAS : -1;
}

/* Why the driver's JIT linker cannot finalize for `dev` now, or NULL when
 * it can: it has the entry points, and the device's context can be had and
 * is usable. */
static const char *driver_cannot_link_for(cuda_device *dev) {
  kjit_status *status;
  if (!cuda_driver_can_link())
    return "the CUDA driver has no JIT linker";
  if (__atomic_load_n(&dev->sticky, __ATOMIC_ACQUIRE))
    return "the driver's JIT linker needs the device's context, which is "
           "unusable";
  if ((status = cuda_make_current(dev))) {
    cuda_host_api->status_destroy(status);
    return "the driver's JIT linker needs the device's context, which "
           "cannot be made current";
  }
  return NULL;
}

kjit_status *cuda_finalize_ptx(const cuda_instance *self, cuda_device *dev,
                               const char *ptx, size_t ptx_size,
                               const char *arch, const char *kernel,
                               size_t kernel_len, uint8_t **cubin,
                               size_t *cubin_size, char **report) {
  static const char *const used_names[] = {"ptxas", "nvJitLink",
                                           "the driver's JIT linker"};
  static const char *const report_names[] = {"ptxas", "nvJitLink", "driver"};
  char *log = NULL;
  char name[256], why[CUDA_PATH_MAX + 128];
  kjit_status *status;
  int policy = CUDA_FINALIZER_AUTO, use = USE_PTXAS;
  uint64_t start, n, ns;
  const char *waited = "";
  snprintf(name, sizeof name, "%.*s",
           (int)(kernel_len > 200 ? 200 : kernel_len), kernel);
  if ((status = cuda_finalizer_policy(&policy)))
    return status;
  switch (policy) {
  case CUDA_FINALIZER_PTXAS:
    if (!tk.has_ptxas) {
      describe_ptxas_missing(why, sizeof why);
      return cuda_error(KJIT_STATUS_FAILED_PRECONDITION,
                        "finalize of kernel '%s' for %s with "
                        "KJIT_CUDA_FINALIZER=ptxas: %s",
                        name, arch, why);
    }
    break;
  case CUDA_FINALIZER_NVJITLINK:
    start_nvjitlink(0);
    if (nvjitlink_state(1) != NVJ_READY)
      return cuda_error(KJIT_STATUS_FAILED_PRECONDITION,
                        "finalize of kernel '%s' for %s with "
                        "KJIT_CUDA_FINALIZER=nvjitlink: %s",
                        name, arch, nvj.error);
    use = USE_NVJITLINK;
    break;
  case CUDA_FINALIZER_DRIVER:
    if (!cuda_driver_can_link())
      return cuda_error(KJIT_STATUS_FAILED_PRECONDITION,
                        "finalize of kernel '%s' for %s with "
                        "KJIT_CUDA_FINALIZER=driver: the CUDA driver %s has "
                        "no JIT linker (cuLinkCreate, cuLinkAddData, "
                        "cuLinkComplete, cuLinkDestroy)",
                        name, arch, cuda_driver_path());
    use = USE_DRIVER;
    break;
  default: {
    /* auto: the toolkit's finalizers, which the H200 measurements favour
     * (docs/CudaBackend.md); without either, the driver's JIT linker, so
     * that a machine with a driver and no toolkit still runs kernels (the
     * fingerprint then names the driver). */
    const char *driver_why;
    if ((use = choose_in_toolkit(&waited)) >= 0)
      break;
    if ((driver_why = driver_cannot_link_for(dev))) {
      describe_ptxas_missing(why, sizeof why);
      return cuda_error(KJIT_STATUS_FAILED_PRECONDITION,
                        "finalize of kernel '%s' for %s: no finalizer: %s, "
                        "%s, and %s",
                        name, arch, why, nvj.error, driver_why);
    }
    use = USE_DRIVER;
    waited = ", the toolkit having neither ptxas nor nvJitLink";
  }
  }
  start = cuda_now_ns();
  if (use == USE_DRIVER)
    status = cuda_driver_link(self, dev, ptx, ptx_size, arch, name, cubin,
                              cubin_size, &log);
  else if (use == USE_NVJITLINK)
    status = run_nvjitlink(ptx, ptx_size, arch, name, cubin, cubin_size, &log);
  else
    status = run_ptxas(ptx, ptx_size, arch, name, cubin, cubin_size, &log);
  if (log)
    *report = cuda_ptxas_report(log, strlen(log), kernel, kernel_len,
                                report_names[use]);
  free(log);
  n = __atomic_add_fetch(&finalize_count, 1, __ATOMIC_RELAXED);
  ns = cuda_now_ns() - start;
  cuda_verbose(self,
               "finalize of kernel '%s' for %s: %s, %llu.%03llu ms (kernel "
               "%llu of the process%s)%s",
               name, arch, used_names[use], (unsigned long long)(ns / 1000000),
               (unsigned long long)(ns / 1000 % 1000), (unsigned long long)n,
               waited, status ? ", failed" : "");
  if (use == USE_NVJITLINK) {
    static int said;
    if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
      cuda_verbose(self, "nvJitLink %s was opened in %llu.%03llu ms", nvj.path,
                   (unsigned long long)(nvj.load_ns / 1000000),
                   (unsigned long long)(nvj.load_ns / 1000 % 1000));
  }
  return status;
}
