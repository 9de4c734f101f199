// The ECN field (RFC 3168) of an Ethernet frame carrying IPv4: reading it, and marking CE with
// the header checksum kept valid. The TCP/UDP checksums do not cover the IP header's TOS byte.
#pragma once

#include <cstdint>
#include <string>

namespace netrepro {

enum class Ecn : uint8_t { NotEct = 0, Ect1 = 1, Ect0 = 2, Ce = 3 };

// The frame's ECN codepoint; NotEct for anything without a whole IPv4 header (not IPv4, too
// short, a bad version or header length), since such a frame cannot be marked.
Ecn ecn_of(const std::string& frame);
inline bool ecn_capable(Ecn e) { return e == Ecn::Ect0 || e == Ecn::Ect1; }
// Sets the ECN field of an ECT frame to CE and updates the IPv4 header checksum incrementally
// (RFC 1624, eqn. 3). Only call it on a frame for which ecn_capable(ecn_of(frame)) holds.
void mark_ce(std::string& frame);

}  // namespace netrepro
