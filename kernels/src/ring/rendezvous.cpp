// A frame on a rank's connection: one byte of kind, eight of length (little
// endian), the bytes. Kinds: 'H' hello (rank, world), 'O' joined, 'E' refused
// (why), 'D' data, 'A' abort (why).
#include "flashlab/kernels/ring/rendezvous.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>

#include "flashlab/kernels/launch/launch_env.hpp"

namespace flashlab::kernels {
namespace {

using Clock = std::chrono::steady_clock;

std::string errno_text() { return std::strerror(errno); }

int ms_left(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::max<long long>(0, std::min<long long>(left, 1 << 30)));
}

std::string seconds(std::chrono::milliseconds t) {
  const long long ms = t.count();
  return ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms";
}

// Waits until `fd` is readable (or writable); false at the deadline. A
// negative deadline count waits without end.
bool wait_for(int fd, short events, int timeout_ms) {
  pollfd p{fd, events, 0};
  for (;;) {
    const int r = ::poll(&p, 1, timeout_ms);
    if (r > 0) return true;
    if (r == 0) return false;
    if (errno != EINTR) return false;
  }
}

void close_fd(int& fd) noexcept {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Whole writes and reads; false when the peer is gone (or the deadline passed).
bool write_all(int fd, const char* data, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::send(fd, data, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    data += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}
bool read_all(int fd, char* data, std::size_t n, int timeout_ms) {
  while (n > 0) {
    if (!wait_for(fd, POLLIN, timeout_ms)) return false;
    const ssize_t r = ::recv(fd, data, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    data += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

bool write_frame(int fd, char kind, const std::string& bytes) {
  char head[9];
  head[0] = kind;
  std::uint64_t n = bytes.size();
  for (int i = 0; i < 8; ++i) head[1 + i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return write_all(fd, head, 9) && write_all(fd, bytes.data(), bytes.size());
}
// The frame's kind, or 0 when none came (peer gone or deadline).
char read_frame(int fd, std::string& bytes, int timeout_ms) {
  char head[9];
  if (!read_all(fd, head, 9, timeout_ms)) return 0;
  std::uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<std::uint64_t>(static_cast<unsigned char>(head[1 + i])) << (8 * i);
  if (n > (std::uint64_t{1} << 40)) return 0;
  bytes.assign(static_cast<std::size_t>(n), '\0');
  if (!read_all(fd, bytes.data(), bytes.size(), timeout_ms)) return 0;
  return head[0];
}

std::string pack(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) {
    const std::uint64_t n = p.size();
    for (int i = 0; i < 8; ++i) out += static_cast<char>((n >> (8 * i)) & 0xff);
    out += p;
  }
  return out;
}
std::vector<std::string> unpack(const std::string& packed, int parts) {
  std::vector<std::string> out;
  std::size_t at = 0;
  for (int k = 0; k < parts; ++k) {
    if (at + 8 > packed.size()) throw RendezvousError("a gathered message from rank 0 is cut short");
    std::uint64_t n = 0;
    for (int i = 0; i < 8; ++i) n |= static_cast<std::uint64_t>(static_cast<unsigned char>(packed[at + i])) << (8 * i);
    at += 8;
    if (at + n > packed.size()) throw RendezvousError("a gathered message from rank 0 is cut short");
    out.push_back(packed.substr(at, static_cast<std::size_t>(n)));
    at += static_cast<std::size_t>(n);
  }
  return out;
}

void no_delay(int fd) {
  int one = 1;
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// One try at connecting to address:port within `timeout_ms`; the socket, or
// -1 with `why` set.
int try_connect(const std::string& address, int port, int timeout_ms, std::string& why) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int g = ::getaddrinfo(address.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (g != 0) {
    why = "cannot resolve '" + address + "' (" + ::gai_strerror(g) + ")";
    return -1;
  }
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) {
      why = "socket: " + errno_text();
      continue;
    }
    const int flags = ::fcntl(fd, F_GETFL, 0);
    (void)::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    int r = ::connect(fd, a->ai_addr, a->ai_addrlen);
    if (r < 0 && errno == EINPROGRESS) {
      if (!wait_for(fd, POLLOUT, timeout_ms)) {
        why = "no answer";
        close_fd(fd);
        continue;
      }
      int err = 0;
      socklen_t len = sizeof err;
      (void)::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      r = err == 0 ? 0 : -1;
      errno = err;
    }
    if (r < 0) {
      why = errno_text();
      close_fd(fd);
      continue;
    }
    (void)::fcntl(fd, F_SETFL, flags);
  }
  ::freeaddrinfo(found);
  if (fd >= 0) no_delay(fd);
  return fd;
}

}  // namespace

std::unique_ptr<RankGroup> RankGroup::join(const RankEnvironment& e, std::chrono::milliseconds join_timeout) {
  return join(e.rank, e.world, e.master_addr, e.port, join_timeout);
}

std::unique_ptr<RankGroup> RankGroup::join(int rank, int world, const std::string& address, int port,
                                           std::chrono::milliseconds join_timeout) {
  if (world < 1 || rank < 0 || rank >= world)
    throw RendezvousError("rank " + std::to_string(rank) + " of " + std::to_string(world) + " is not a rank of the job");
  std::unique_ptr<RankGroup> g(new RankGroup(rank, world));
  if (world == 1) return g;
  const Clock::time_point deadline = Clock::now() + join_timeout;
  const std::string where = address + ":" + std::to_string(port);

  if (rank == 0) {
    g->peers_.assign(static_cast<std::size_t>(world), -1);
    g->listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (g->listener_ < 0) throw RendezvousError("rank 0 cannot open a socket: " + errno_text());
    int one = 1;
    (void)::setsockopt(g->listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    if (::bind(g->listener_, reinterpret_cast<sockaddr*>(&a), sizeof a) < 0 || ::listen(g->listener_, world) < 0)
      throw RendezvousError("rank 0 cannot listen on port " + std::to_string(port) + ": " + errno_text());
    int joined = 1;
    std::string refused;
    while (joined < world && refused.empty()) {
      if (!wait_for(g->listener_, POLLIN, ms_left(deadline))) break;
      int fd = ::accept(g->listener_, nullptr, nullptr);
      if (fd < 0) continue;
      no_delay(fd);
      std::string hello;
      if (read_frame(fd, hello, std::max(1, ms_left(deadline))) != 'H') {
        close_fd(fd);
        continue;  // not one of ours (or gone): keep listening
      }
      int r = -1, w = -1;
      if (std::sscanf(hello.c_str(), "%d %d", &r, &w) != 2) r = -1;
      std::string bad;
      if (w != world)
        bad = "rank " + std::to_string(r) + " says the job has " + std::to_string(w) + " ranks, rank 0 says " +
              std::to_string(world);
      else if (r < 1 || r >= world)
        bad = "a rank " + std::to_string(r) + " joined a job of " + std::to_string(world) + " ranks";
      else if (g->peers_[static_cast<std::size_t>(r)] >= 0)
        bad = "rank " + std::to_string(r) + " joined twice (two processes were given the same rank)";
      if (!bad.empty()) {
        (void)write_frame(fd, 'E', bad);
        close_fd(fd);
        refused = bad;
        break;
      }
      g->peers_[static_cast<std::size_t>(r)] = fd;
      ++joined;
    }
    if (joined < world) {
      std::string why = refused;
      if (why.empty()) {
        std::string missing;
        int count = 0;
        for (int r = 1; r < world; ++r)
          if (g->peers_[static_cast<std::size_t>(r)] < 0) {
            missing += (count++ ? ", " : "") + std::to_string(r);
          }
        why = std::to_string(count) + " of " + std::to_string(world - 1) + " ranks did not join rank 0 on port " +
              std::to_string(port) + " within " + seconds(join_timeout) + " (missing: " + missing + ")";
      }
      for (int& fd : g->peers_)
        if (fd >= 0) (void)write_frame(fd, 'E', why);
      throw RendezvousError(why);
    }
    for (int r = 1; r < world; ++r) (void)write_frame(g->peers_[static_cast<std::size_t>(r)], 'O', std::string());
    return g;
  }

  // Rank r ≥ 1: connect (rank 0 may not be listening yet), say who, wait for the word.
  std::string why = "no answer";
  int fd = -1;
  while (fd < 0) {
    fd = try_connect(address, port, std::min(ms_left(deadline), 1000), why);
    if (fd >= 0) break;
    if (ms_left(deadline) <= 0)
      throw RendezvousError("rank " + std::to_string(rank) + " could not reach rank 0 at " + where + " within " +
                            seconds(join_timeout) + " (" + why + ")");
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(100, ms_left(deadline))));
  }
  g->peers_.assign(1, fd);
  if (!write_frame(fd, 'H', std::to_string(rank) + " " + std::to_string(world)))
    throw RendezvousError("rank " + std::to_string(rank) + ": rank 0 at " + where + " closed the connection");
  // Rank 0 answers once every rank has come, or says why not at its own
  // deadline: wait a little longer than a whole timeout for its word.
  std::string reply;
  const int wait_ms = static_cast<int>(std::min<long long>(join_timeout.count() + 5000, 1 << 30));
  const char kind = read_frame(fd, reply, wait_ms);
  if (kind == 'O') return g;
  if (kind == 'E') throw RendezvousError(reply);
  throw RendezvousError("rank " + std::to_string(rank) + ": rank 0 at " + where +
                        (kind == 0 ? " gave no word that the job had joined" : " answered something else") +
                        " (is another program listening on that port?)");
}

RankGroup::~RankGroup() {
  for (int& fd : peers_) close_fd(fd);
  close_fd(listener_);
}

void RankGroup::check_members(int members) const {
  if (aborted_) throw RendezvousError("the job stopped at an earlier exchange");
  if (members < 1 || members > world_ || rank_ >= members)
    throw std::logic_error("an exchange among " + std::to_string(members) + " ranks on rank " + std::to_string(rank_) +
                           " of " + std::to_string(world_));
}

std::string RankGroup::receive(int fd, int peer_rank) {
  std::string bytes;
  const char kind = read_frame(fd, bytes, -1);
  if (kind == 'D') return bytes;
  aborted_ = true;
  if (kind == 'A') throw RendezvousError(bytes);
  throw RendezvousError("rank " + std::to_string(peer_rank) + " left the job (its connection closed)");
}

void RankGroup::send(int fd, int peer_rank, char kind, const std::string& bytes) {
  if (write_frame(fd, kind, bytes)) return;
  aborted_ = true;
  throw RendezvousError("rank " + std::to_string(peer_rank) + " left the job (its connection closed)");
}

std::vector<std::string> RankGroup::allgather(const std::string& mine, int members) {
  check_members(members);
  if (members == 1) return {mine};
  if (rank_ != 0) {
    send(peers_[0], 0, 'D', mine);
    return unpack(receive(peers_[0], 0), members);
  }
  std::vector<std::string> all(static_cast<std::size_t>(members));
  all[0] = mine;
  for (int r = 1; r < members; ++r) {
    try {
      all[static_cast<std::size_t>(r)] = receive(peers_[static_cast<std::size_t>(r)], r);
    } catch (const RendezvousError& e) {
      // Rank r stopped: the others hear it from here.
      aborted_ = false;
      abort(e.what());
      throw;
    }
  }
  const std::string packed = pack(all);
  for (int r = 1; r < members; ++r) send(peers_[static_cast<std::size_t>(r)], r, 'D', packed);
  return all;
}

std::string RankGroup::broadcast(const std::string& from_rank0, int members) {
  check_members(members);
  if (members == 1) return from_rank0;
  if (rank_ != 0) return receive(peers_[0], 0);
  for (int r = 1; r < members; ++r) send(peers_[static_cast<std::size_t>(r)], r, 'D', from_rank0);
  return from_rank0;
}

void RankGroup::abort(const std::string& why) noexcept {
  if (aborted_) return;
  aborted_ = true;
  try {
    const std::string said = why.rfind("rank ", 0) == 0 ? why : "rank " + std::to_string(rank_) + ": " + why;
    for (std::size_t r = 0; r < peers_.size(); ++r)
      if (peers_[r] >= 0 && static_cast<int>(r) != rank_) (void)write_frame(peers_[r], 'A', said);
  } catch (...) {
  }
}

}  // namespace flashlab::kernels
