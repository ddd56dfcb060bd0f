// The "dloop_fault" SQLite VFS: the default VFS with every file wrapped so that xWrite, xTruncate
// and xSync pass through a process-wide counter that fails the planned operation. See
// fault_vfs.h. Thread-safety: atomics for the plan and counters; registration under call_once.
#include "dloop/memory/fault_vfs.h"

#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <mutex>

namespace dloop::memory::fault_vfs {
namespace {

constexpr const char* kName = "dloop_fault";

std::atomic<int64_t> g_fail_at{0};  // 0: disarmed
std::atomic<bool> g_sticky{false};
std::atomic<int> g_fault{static_cast<int>(Fault::kIoError)};
std::atomic<int64_t> g_writes{0};
std::atomic<int64_t> g_failures{0};

std::atomic<int64_t> g_hold_at{0};  // 0: no hold
std::atomic<int64_t> g_hold_ms{0};
std::atomic<int64_t> g_hold_until_ms{0};  // steady-clock ms; set by the at-th attempt
std::atomic<int64_t> g_lock_attempts{0};
std::atomic<int64_t> g_busy{0};

sqlite3_vfs* g_root = nullptr;
sqlite3_vfs g_vfs;
std::once_flag g_once;

// Our file: the wrapper header, followed in the same allocation by the real file of g_root.
struct FaultFile {
  sqlite3_file base;
  sqlite3_file* real;
};

sqlite3_file* real_of(sqlite3_file* f) { return reinterpret_cast<FaultFile*>(f)->real; }

int planned_failure(int io_error) {
  const int64_t n = ++g_writes;
  const int64_t at = g_fail_at.load();
  if (at <= 0 || n < at || (n > at && !g_sticky.load())) return SQLITE_OK;
  ++g_failures;
  return g_fault.load() == static_cast<int>(Fault::kDiskFull) ? SQLITE_FULL : io_error;
}

int f_close(sqlite3_file* f) { return real_of(f)->pMethods->xClose(real_of(f)); }
int f_read(sqlite3_file* f, void* buf, int n, sqlite3_int64 off) {
  return real_of(f)->pMethods->xRead(real_of(f), buf, n, off);
}
int f_write(sqlite3_file* f, const void* buf, int n, sqlite3_int64 off) {
  if (int rc = planned_failure(SQLITE_IOERR_WRITE); rc != SQLITE_OK) return rc;
  return real_of(f)->pMethods->xWrite(real_of(f), buf, n, off);
}
int f_truncate(sqlite3_file* f, sqlite3_int64 size) {
  if (int rc = planned_failure(SQLITE_IOERR_TRUNCATE); rc != SQLITE_OK) return rc;
  return real_of(f)->pMethods->xTruncate(real_of(f), size);
}
int f_sync(sqlite3_file* f, int flags) {
  if (int rc = planned_failure(SQLITE_IOERR_FSYNC); rc != SQLITE_OK) return rc;
  return real_of(f)->pMethods->xSync(real_of(f), flags);
}
int f_file_size(sqlite3_file* f, sqlite3_int64* size) { return real_of(f)->pMethods->xFileSize(real_of(f), size); }
int f_lock(sqlite3_file* f, int level) { return real_of(f)->pMethods->xLock(real_of(f), level); }
int f_unlock(sqlite3_file* f, int level) { return real_of(f)->pMethods->xUnlock(real_of(f), level); }
int f_check_reserved(sqlite3_file* f, int* out) {
  return real_of(f)->pMethods->xCheckReservedLock(real_of(f), out);
}
int f_file_control(sqlite3_file* f, int op, void* arg) {
  return real_of(f)->pMethods->xFileControl(real_of(f), op, arg);
}
int f_sector_size(sqlite3_file* f) { return real_of(f)->pMethods->xSectorSize(real_of(f)); }
int f_device_characteristics(sqlite3_file* f) {
  return real_of(f)->pMethods->xDeviceCharacteristics(real_of(f));
}
int f_shm_map(sqlite3_file* f, int page, int size, int extend, void volatile** out) {
  return real_of(f)->pMethods->xShmMap(real_of(f), page, size, extend, out);
}
int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The WAL write lock is shm lock slot 0, taken exclusive.
bool held_by_someone_else(int offset, int flags) {
  if (offset != 0 || flags != (SQLITE_SHM_LOCK | SQLITE_SHM_EXCLUSIVE) || g_hold_at.load() <= 0) return false;
  const int64_t n = ++g_lock_attempts;
  if (n == g_hold_at.load()) g_hold_until_ms = steady_ms() + g_hold_ms.load();
  if (n < g_hold_at.load() || steady_ms() >= g_hold_until_ms.load()) return false;
  ++g_busy;
  return true;
}

int f_shm_lock(sqlite3_file* f, int offset, int n, int flags) {
  if (held_by_someone_else(offset, flags)) return SQLITE_BUSY;
  return real_of(f)->pMethods->xShmLock(real_of(f), offset, n, flags);
}
void f_shm_barrier(sqlite3_file* f) { real_of(f)->pMethods->xShmBarrier(real_of(f)); }
int f_shm_unmap(sqlite3_file* f, int delete_flag) {
  return real_of(f)->pMethods->xShmUnmap(real_of(f), delete_flag);
}
int f_fetch(sqlite3_file* f, sqlite3_int64 off, int amount, void** out) {
  return real_of(f)->pMethods->xFetch(real_of(f), off, amount, out);
}
int f_unfetch(sqlite3_file* f, sqlite3_int64 off, void* p) { return real_of(f)->pMethods->xUnfetch(real_of(f), off, p); }

// Version 3 methods; the unix VFS files that SQLite 3.40 opens are version 3 too.
const sqlite3_io_methods kMethods = {
    3,           f_close,      f_read,       f_write,        f_truncate,         f_sync,
    f_file_size, f_lock,       f_unlock,     f_check_reserved, f_file_control,   f_sector_size,
    f_device_characteristics, f_shm_map, f_shm_lock, f_shm_barrier, f_shm_unmap, f_fetch,
    f_unfetch,
};

int v_open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* file, int flags, int* out_flags) {
  auto* ff = reinterpret_cast<FaultFile*>(file);
  ff->real = reinterpret_cast<sqlite3_file*>(ff + 1);
  ff->base.pMethods = nullptr;
  int rc = g_root->xOpen(g_root, name, ff->real, flags, out_flags);
  if (rc != SQLITE_OK) {
    if (ff->real->pMethods != nullptr) ff->real->pMethods->xClose(ff->real);
    return rc;
  }
  ff->base.pMethods = &kMethods;
  return SQLITE_OK;
}

void register_vfs() {
  g_root = sqlite3_vfs_find(nullptr);
  g_vfs = *g_root;  // the root's other methods work unchanged: pAppData and sizes are copied
  g_vfs.pNext = nullptr;
  g_vfs.zName = kName;
  g_vfs.szOsFile = static_cast<int>(sizeof(FaultFile)) + g_root->szOsFile;
  g_vfs.xOpen = v_open;
  sqlite3_vfs_register(&g_vfs, 0);
}

}  // namespace

const char* name() {
  std::call_once(g_once, register_vfs);
  return kName;
}

void arm(int64_t fail_at, Fault fault, bool sticky) {
  g_fault = static_cast<int>(fault);
  g_sticky = sticky;
  g_writes = 0;
  g_failures = 0;
  g_fail_at = fail_at;
}

void disarm() {
  g_fail_at = 0;
  g_hold_at = 0;
}

void hold_write_lock(int64_t at, int64_t hold_ms) {
  g_lock_attempts = 0;
  g_busy = 0;
  g_hold_until_ms = 0;
  g_hold_ms = hold_ms;
  g_hold_at = at;
}

int64_t busy_refusals() { return g_busy.load(); }
int64_t writes() { return g_writes.load(); }
int64_t failures() { return g_failures.load(); }
void reset_count() {
  g_writes = 0;
  g_failures = 0;
}

}  // namespace dloop::memory::fault_vfs
