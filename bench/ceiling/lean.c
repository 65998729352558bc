// lean: the least an HTTP/1.1 keep-alive server can do to send prepared page
// bytes, for bench/ceiling.sh. It answers GET /fragment?page=N (1..PAGES) with
// DIR/fragments/N.html and a fixed head, nothing else: no routing, no limits,
// no timeouts, no parser worth the name. It is not a server for anything but
// that bench: it shows what an event loop of our own could reach on the same
// bytes and cores, next to nginx and to Warmfeed on libmicrohttpd.
//
// Each of THREADS threads has its own epoll and its own SO_REUSEPORT listener
// (as nginx's `reuseport`), edge-triggered. MODE copy sends the head and the
// body from memory in one writev; MODE sendfile sends the head (MSG_MORE) and
// then the body with sendfile from a memfd, as nginx does from its files.
//
//   lean PORT THREADS copy|sendfile DIR PAGES
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

typedef struct {
  char head[256];
  size_t head_length;
  char *body;
  size_t body_length;
  int fd;
} page_t;

typedef struct {
  int fd;
  char in[8192];
  size_t in_length;
  page_t *sending;  // the answer being sent, or NULL
  size_t sent;      // bytes of it (head and body) sent so far
} connection_t;

static page_t *pages;
static int page_count, port, use_sendfile;

static int listener(void) {
  int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
  setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  setsockopt(s, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (bind(s, (struct sockaddr *)&address, sizeof address) || listen(s, 1024)) {
    perror("lean: bind/listen");
    exit(1);
  }
  return s;
}

// Sends what is left of the answer: 1 when all of it went, 0 when the socket
// is full (the next EPOLLOUT edge goes on), -1 when the connection failed.
static int flush(connection_t *c) {
  page_t *p = c->sending;
  while (c->sent < p->head_length + p->body_length) {
    ssize_t n;
    if (!use_sendfile) {
      struct iovec parts[2];
      int count = 0;
      if (c->sent < p->head_length) parts[count++] = (struct iovec){p->head + c->sent, p->head_length - c->sent};
      size_t from = c->sent < p->head_length ? 0 : c->sent - p->head_length;
      parts[count++] = (struct iovec){p->body + from, p->body_length - from};
      n = writev(c->fd, parts, count);
    } else if (c->sent < p->head_length) {
      n = send(c->fd, p->head + c->sent, p->head_length - c->sent, MSG_MORE | MSG_NOSIGNAL);
    } else {
      off_t offset = (off_t)(c->sent - p->head_length);
      n = sendfile(c->fd, p->fd, &offset, p->body_length - (size_t)offset);
    }
    if (n < 0) return errno == EAGAIN ? 0 : -1;
    c->sent += (size_t)n;
  }
  c->sending = NULL;
  return 1;
}

// Answers every whole head read so far, in order; the same return as flush.
static int answer(connection_t *c) {
  char *end;
  while (!c->sending && (end = memmem(c->in, c->in_length, "\r\n\r\n", 4))) {
    char *query = memmem(c->in, (size_t)(end - c->in), "page=", 5);
    int page = query ? atoi(query + 5) : 1;
    if (page < 1 || page > page_count) page = 1;
    size_t used = (size_t)(end + 4 - c->in);
    memmove(c->in, end + 4, c->in_length - used);
    c->in_length -= used;
    c->sending = &pages[page - 1];
    c->sent = 0;
    int flushed = flush(c);
    if (flushed <= 0) return flushed;
  }
  return 1;
}

static void end(connection_t *c) {
  close(c->fd);
  free(c);
}

static void *worker(void *unused) {
  (void)unused;
  int listening = listener(), poll = epoll_create1(0);
  struct epoll_event event = {.events = EPOLLIN, .data.ptr = NULL};
  epoll_ctl(poll, EPOLL_CTL_ADD, listening, &event);
  struct epoll_event events[512];
  for (;;) {
    int ready = epoll_wait(poll, events, 512, -1);
    for (int i = 0; i < ready; i++) {
      connection_t *c = events[i].data.ptr;
      if (!c) {
        int fd;
        while ((fd = accept4(listening, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
          int one = 1;
          setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          connection_t *fresh = calloc(1, sizeof *fresh);
          fresh->fd = fd;
          struct epoll_event e = {.events = EPOLLIN | EPOLLOUT | EPOLLET | EPOLLRDHUP, .data.ptr = fresh};
          epoll_ctl(poll, EPOLL_CTL_ADD, fd, &e);
        }
        continue;
      }
      if (c->sending) {
        // The answer in flight first, then the heads that came in behind it.
        int flushed = flush(c);
        if (flushed > 0) flushed = answer(c);
        if (flushed < 0) {
          end(c);
          continue;
        }
        if (flushed == 0) continue;
      }
      // Edge-triggered: read until the socket is empty (or the buffer is full of unanswered heads).
      int open = 1;
      while (open && !c->sending) {
        if (c->in_length == sizeof c->in) {  // 8 KiB and no whole head in it
          open = 0;
          break;
        }
        ssize_t n = recv(c->fd, c->in + c->in_length, sizeof c->in - c->in_length, 0);
        if (n == 0 || (n < 0 && errno != EAGAIN)) open = 0;
        else if (n < 0) break;
        else {
          c->in_length += (size_t)n;
          if (answer(c) < 0) open = 0;
        }
      }
      if (!open) end(c);
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 6 || (strcmp(argv[3], "copy") && strcmp(argv[3], "sendfile"))) {
    fprintf(stderr, "usage: lean PORT THREADS copy|sendfile DIR PAGES\n");
    return 2;
  }
  port = atoi(argv[1]);
  int threads = atoi(argv[2]);
  use_sendfile = !strcmp(argv[3], "sendfile");
  page_count = atoi(argv[5]);
  pages = calloc((size_t)page_count, sizeof *pages);
  for (int i = 0; i < page_count; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/fragments/%d.html", argv[4], i + 1);
    int fd = open(path, O_RDONLY);
    off_t size = fd < 0 ? -1 : lseek(fd, 0, SEEK_END);
    page_t *p = &pages[i];
    p->body = size < 0 ? NULL : malloc((size_t)size + 1);
    if (!p->body || pread(fd, p->body, (size_t)size, 0) != size) {
      perror(path);
      return 1;
    }
    close(fd);
    p->body_length = (size_t)size;
    p->head_length = (size_t)snprintf(p->head, sizeof p->head,
        "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nCache-Control: no-cache\r\n"
        "X-Content-Type-Options: nosniff\r\nContent-Length: %zu\r\n\r\n", p->body_length);
    if (use_sendfile) {
      p->fd = memfd_create("page", 0);
      if (p->fd < 0 || write(p->fd, p->body, p->body_length) != (ssize_t)p->body_length) {
        perror("lean: memfd");
        return 1;
      }
    }
  }
  pthread_t running[64];
  if (threads < 1 || threads > 64) threads = 1;
  for (int i = 0; i < threads; i++) pthread_create(&running[i], NULL, worker, NULL);
  fprintf(stderr, "lean: %d pages on 127.0.0.1:%d, %d threads, %s\n", page_count, port, threads, argv[3]);
  for (int i = 0; i < threads; i++) pthread_join(running[i], NULL);
  return 0;
}
