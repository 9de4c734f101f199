#include <gtest/gtest.h>

#include "clock.hh"
#include "system_error.hh"
#include "udp_socket.hh"

using namespace netrepro;

TEST(SystemError, CarriesErrnoAndContext) {
  try {
    check_syscall("open /nonexistent", -1 * (errno = ENOENT, 1));
    FAIL() << "no exception";
  } catch (const SystemError& e) {
    EXPECT_EQ(e.error_number(), ENOENT);
    EXPECT_NE(std::string(e.what()).find("open /nonexistent"), std::string::npos);
  }
}

TEST(Clock, MonotonicAdvancesAcrossSleep) {
  const uint64_t start = monotonic_us();
  sleep_until_us(start + 2000);
  EXPECT_GE(monotonic_us(), start + 2000);
}

TEST(UdpSocket, LoopbackRoundTripCarriesKernelTimestamp) {
  UdpSocket receiver;
  receiver.bind(Address::from("127.0.0.1", 0));
  UdpSocket sender;
  sender.sendto(receiver.local_address(), "hello");
  const ReceivedDatagram d = receiver.recv();
  EXPECT_EQ(d.payload, "hello");
  EXPECT_GT(d.kernel_timestamp_us, 0u);
}

TEST(Address, RejectsNonAddress) { EXPECT_THROW(Address::from("nope", 1), std::invalid_argument); }
