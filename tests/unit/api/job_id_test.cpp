// Surface B job ids: the lead id and a tag only the holder of the campaign key it was issued to
// can check, so that a poll can tell "ours, not stored yet" from "never issued to us" without
// asking the store.
#include <gtest/gtest.h>

#include <string>

#include "leadflow/api/job_ids.hpp"
#include "leadflow/base/ids.hpp"

namespace leadflow {
namespace {

const std::string kJobKey = "lfc_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG";
const std::string kOther = "lfc_GFEDCBAzyxwvutsrqponmlkjihgfedcba9876543210";

TEST(JobIds, CarryTheLeadIdAndCheckAgainstTheirKeyOnly) {
  const std::string lead = new_id(kLeadPrefix);
  const std::string job = job_id_for(lead, kJobKey);
  EXPECT_EQ(job.rfind(lead, 0), 0u);
  EXPECT_GT(job.size(), lead.size());
  const JobRef ok = parse_job_id(job, kJobKey);
  EXPECT_EQ(ok.lead_id, lead);
  EXPECT_TRUE(ok.issued_to_key);
  const JobRef other = parse_job_id(job, kOther);
  EXPECT_EQ(other.lead_id, lead);
  EXPECT_FALSE(other.issued_to_key);
  // The same lead and key always give the same job id.
  EXPECT_EQ(job_id_for(lead, kJobKey), job);
}

TEST(JobIds, ABareLeadIdIsALeadIdThatProvesNothing) {
  const std::string lead = new_id(kLeadPrefix);
  const JobRef ref = parse_job_id(lead, kJobKey);
  EXPECT_EQ(ref.lead_id, lead);
  EXPECT_FALSE(ref.issued_to_key);
}

TEST(JobIds, AnythingElseIsNoLead) {
  const std::string lead = new_id(kLeadPrefix);
  std::string job = job_id_for(lead, kJobKey);
  std::string tampered = job;
  tampered.back() = tampered.back() == 'A' ? 'B' : 'A';
  EXPECT_FALSE(parse_job_id(tampered, kJobKey).issued_to_key);
  for (const std::string& junk :
       {std::string(""), std::string("x"), std::string("ld_"), lead + ".", job + "A",
        std::string("by_") + lead.substr(3), lead.substr(0, 10) + job.substr(lead.size())})
    EXPECT_FALSE(parse_job_id(junk, kJobKey).issued_to_key) << junk;
  EXPECT_TRUE(parse_job_id("x", kJobKey).lead_id.empty());
}

}  // namespace
}  // namespace leadflow
