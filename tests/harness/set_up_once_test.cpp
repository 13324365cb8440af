// set_up_kept keeps each instance's objects between its repetitions, whatever order they come
// in, and frees other instances' least recently used ones first when memory runs short;
// set_up_once's live only while their instance runs. Checked here without a GPU, through the
// instance scope that the registration opens around every call of a benchmark function.
#include <kernelwatch/detail/instance.hpp>
#include <kernelwatch/detail/kept_set_ups.hpp>
#include <kernelwatch/detail/run_options.hpp>
#include <kernelwatch/set_up_once.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace kw = kernelwatch;

namespace {

int made = 0;
int alive = 0;

struct counted {
  explicit counted(int value) : value(value) {
    ++made;
    ++alive;
  }
  ~counted() { --alive; }
  counted(const counted&) = delete;
  counted& operator=(const counted&) = delete;
  int value;
};

struct other_type {
  int value = 7;
};

// One call of a benchmark function of instance `key`: what the registration does.
counted& repetition(const std::string& key, int value) {
  const kw::detail::instance_scope scope(key);
  return kw::set_up_kept<counted>(value);
}

counted& repetition_once(const std::string& key, int value) {
  const kw::detail::instance_scope scope(key);
  return kw::set_up_once<counted>(value);
}

void keep_set_ups(kw::detail::set_up_keeping keeping) {
  kw::detail::run_options options = kw::detail::current_run_options();
  options.keep_set_ups = keeping;
  kw::detail::set_current_run_options(options);
}

class SetUpOnce : public ::testing::Test {
 protected:
  void SetUp() override {
    made = 0;
    kw::detail::set_memory_short_test([this] { return short_of_memory; });
  }
  void TearDown() override {
    kw::detail::drop_kept_set_ups();
    kw::detail::set_memory_short_test({});
    EXPECT_EQ(alive, 0) << "drop_kept_set_ups frees everything";
  }
  bool short_of_memory = false;
};

}  // namespace

TEST_F(SetUpOnce, KeepsEachInstancesObjectThroughInterleavedRepetitions) {
  counted* first = &repetition("family/1", 1);
  counted* second = &repetition("family/2", 2);
  EXPECT_EQ(&repetition("family/1", 99), first) << "a later repetition gets the same object";
  EXPECT_EQ(first->value, 1) << "its arguments are not used again";
  EXPECT_EQ(&repetition("family/2", 99), second);
  EXPECT_EQ(made, 2);
  EXPECT_EQ(alive, 2);
}

TEST_F(SetUpOnce, FreesOtherInstancesLeastRecentlyUsedFirstWhenMemoryIsShort) {
  repetition("family/1", 1);
  repetition("family/2", 2);
  repetition("family/1", 1);  // now family/2 is the least recently used
  kw::detail::set_memory_short_test([] { return alive > 1; });  // short until one is freed
  repetition("family/3", 3);
  EXPECT_EQ(alive, 2) << "one freed to make room, then the new one made";
  EXPECT_EQ(made, 3);
  repetition("family/1", 1);
  EXPECT_EQ(made, 3) << "family/1 was kept";
  kw::detail::set_memory_short_test({});
  repetition("family/2", 2);
  EXPECT_EQ(made, 4) << "family/2 was freed, so it is made again";
}

TEST_F(SetUpOnce, NeverFreesTheRunningInstancesOwnObjects) {
  short_of_memory = true;  // always: everything else goes
  repetition("family/1", 1);
  const kw::detail::instance_scope scope("family/2");
  counted& mine = kw::set_up_kept<counted>(5);
  other_type& also_mine = kw::set_up_once<other_type>();  // made while memory is short
  EXPECT_EQ(&kw::set_up_kept<counted>(6), &mine) << "one object per type and instance";
  EXPECT_EQ(&kw::set_up_once<other_type>(), &also_mine);
  EXPECT_EQ(mine.value, 5);
  EXPECT_EQ(also_mine.value, 7);
  EXPECT_EQ(alive, 1) << "family/1's object was freed, family/2's kept";
}

TEST_F(SetUpOnce, KeepsAtMostTheCapOfObjects) {
  for (std::size_t i = 0; i <= kw::detail::max_kept_set_ups; ++i) {
    repetition("family/" + std::to_string(i), 0);
  }
  EXPECT_EQ(static_cast<std::size_t>(alive), kw::detail::max_kept_set_ups);
}

TEST_F(SetUpOnce, SetUpOnceObjectsLiveOnlyWhileTheirInstanceRuns) {
  counted& first = repetition_once("family/1", 1);
  EXPECT_EQ(&repetition_once("family/1", 99), &first) << "its next repetition reuses it";
  repetition("family/kept", 2);
  EXPECT_EQ(alive, 1) << "family/1's object is freed before another instance makes one";
  repetition_once("family/2", 3);
  EXPECT_EQ(alive, 2) << "set_up_kept's object stays while other instances run";
  EXPECT_EQ(repetition_once("family/1", 4).value, 4) << "family/1 comes back to a new object";
  EXPECT_EQ(made, 4);
}

TEST_F(SetUpOnce, KeepingEverythingKeepsSetUpOnceObjectsToo) {
  keep_set_ups(kw::detail::set_up_keeping::all);  // --kernelwatch_keep_set_ups=all
  counted& first = repetition_once("family/1", 1);
  repetition_once("family/2", 2);
  EXPECT_EQ(&repetition_once("family/1", 1), &first);
  EXPECT_EQ(alive, 2);
  keep_set_ups(kw::detail::set_up_keeping::declared);
}

TEST_F(SetUpOnce, KeepingOnlyTheRunningInstancesFreesTheOthersBeforeANewObject) {
  keep_set_ups(kw::detail::set_up_keeping::running);  // --kernelwatch_keep_set_ups=running
  repetition("family/1", 1);
  EXPECT_EQ(alive, 1);
  repetition("family/2", 2);
  EXPECT_EQ(alive, 1) << "family/1's object is freed before family/2's is made";
  EXPECT_EQ(repetition("family/2", 2).value, 2);
  EXPECT_EQ(made, 2) << "the running instance's own object is still kept";
  keep_set_ups(kw::detail::set_up_keeping::declared);
}
