#include "mapguard.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <pthread.h>

/* Room for this many guarded mappings at once (a store keeps three files). */
#define WF_MAPGUARD_SLOTS 1024

struct wf_mapguard_slot {
    /* 1 while the slot is taken (claimed before start and length are set). */
    atomic_int taken;
    /* The range; start 0 while the slot guards nothing. */
    atomic_uintptr_t start;
    atomic_uintptr_t length;
    atomic_int faulted;
};

static struct wf_mapguard_slot slots[WF_MAPGUARD_SLOTS];
static struct sigaction previous;
static uintptr_t page_size;
static atomic_ulong faults;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int installed = -1;

static void hand_on(int signal_number, siginfo_t *info, void *context) {
    if (previous.sa_flags & SA_SIGINFO) {
        if (previous.sa_sigaction) {
            previous.sa_sigaction(signal_number, info, context);
            return;
        }
    } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
        previous.sa_handler(signal_number);
        return;
    }
    /* The default: returning re-runs the access, which now kills the process as it would have. */
    struct sigaction fallback;
    memset(&fallback, 0, sizeof fallback);
    fallback.sa_handler = SIG_DFL;
    sigaction(SIGBUS, &fallback, NULL);
}

static void on_sigbus(int signal_number, siginfo_t *info, void *context) {
    uintptr_t address = (uintptr_t)info->si_addr;
    for (int index = 0; index < WF_MAPGUARD_SLOTS; index++) {
        uintptr_t start = atomic_load(&slots[index].start);
        if (start == 0 || address < start || address - start >= atomic_load(&slots[index].length)) continue;
        /* Marked before the zeros are in place: a reader that sees zeros sees the mark after its copy. */
        atomic_store(&slots[index].faulted, 1);
        void *page = (void *)(address & ~(page_size - 1));
        if (mmap(page, page_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) {
            atomic_fetch_add(&faults, 1);
            return;
        }
        break;
    }
    hand_on(signal_number, info, context);
}

static void install(void) {
    long size = sysconf(_SC_PAGESIZE);
    page_size = size > 0 ? (uintptr_t)size : 4096;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_sigbus;
    action.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    installed = sigaction(SIGBUS, &action, &previous) == 0 ? 0 : -1;
}

int wf_mapguard_install(void) {
    pthread_once(&once, install);
    return installed;
}

int wf_mapguard_register(const void *base, size_t length) {
    if (base == NULL || length == 0) return -1;
    for (int index = 0; index < WF_MAPGUARD_SLOTS; index++) {
        int expected = 0;
        if (!atomic_compare_exchange_strong(&slots[index].taken, &expected, 1)) continue;
        atomic_store(&slots[index].faulted, 0);
        atomic_store(&slots[index].length, (uintptr_t)length);
        atomic_store(&slots[index].start, (uintptr_t)base);
        return index;
    }
    return -1;
}

void wf_mapguard_unregister(int slot) {
    if (slot < 0 || slot >= WF_MAPGUARD_SLOTS) return;
    atomic_store(&slots[slot].start, 0);
    atomic_store(&slots[slot].length, 0);
    atomic_store(&slots[slot].faulted, 0);
    atomic_store(&slots[slot].taken, 0);
}

int wf_mapguard_copy(int slot, void *destination, const void *source, size_t count) {
    memcpy(destination, source, count);
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(&slots[slot].faulted, memory_order_relaxed) ? -1 : 0;
}

int wf_mapguard_faulted(int slot) {
    if (slot < 0 || slot >= WF_MAPGUARD_SLOTS) return 1;
    return atomic_load(&slots[slot].faulted) ? 1 : 0;
}

unsigned long wf_mapguard_faults(void) {
    return atomic_load(&faults);
}
