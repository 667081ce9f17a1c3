#include "leadflow/base/address_key.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

namespace leadflow {

std::string address_limit_key(std::string_view address) {
  std::string text(address);
  in6_addr a6{};
  if (inet_pton(AF_INET6, text.c_str(), &a6) != 1) return text;
  if (IN6_IS_ADDR_V4MAPPED(&a6)) {
    char v4[INET_ADDRSTRLEN] = "";
    inet_ntop(AF_INET, a6.s6_addr + 12, v4, sizeof v4);
    return v4;
  }
  std::memset(a6.s6_addr + 8, 0, 8);
  char v6[INET6_ADDRSTRLEN] = "";
  inet_ntop(AF_INET6, &a6, v6, sizeof v6);
  return std::string(v6) + "/64";
}

}  // namespace leadflow
