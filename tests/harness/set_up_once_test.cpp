// set_up_once keeps one instance's objects between its repetitions and frees them before the
// next instance makes its own: checked here without a GPU, through the instance scope that
// the registration opens around every call of a benchmark function.
#include <kernelwatch/detail/instance.hpp>
#include <kernelwatch/set_up_once.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace kw = kernelwatch;

namespace {

int made = 0;
int alive = 0;
int most_alive = 0;

struct counted {
  explicit counted(int value) : value(value) {
    ++made;
    most_alive = std::max(most_alive, ++alive);
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
  return kw::set_up_once<counted>(value);
}

}  // namespace

TEST(SetUpOnce, KeepsOneObjectPerInstanceAndFreesItBeforeTheNextInstanceMakesItsOwn) {
  made = alive = most_alive = 0;
  counted* first = &repetition("family/1", 1);
  EXPECT_EQ(&repetition("family/1", 99), first) << "a later repetition gets the same object";
  EXPECT_EQ(first->value, 1) << "its arguments are not used again";
  EXPECT_EQ(made, 1);

  EXPECT_EQ(repetition("family/2", 2).value, 2);
  EXPECT_EQ(made, 2);
  EXPECT_EQ(most_alive, 1) << "the first instance's object was freed before the second was made";

  EXPECT_EQ(repetition("family/1", 3).value, 3) << "an instance met again starts afresh";
  kw::detail::drop_kept_set_ups();
  EXPECT_EQ(alive, 0);
}

TEST(SetUpOnce, KeepsOneObjectPerTypeWithinAnInstance) {
  made = alive = most_alive = 0;
  const kw::detail::instance_scope scope("family/types");
  counted& a = kw::set_up_once<counted>(5);
  other_type& b = kw::set_up_once<other_type>();
  EXPECT_EQ(&kw::set_up_once<counted>(6), &a);
  EXPECT_EQ(&kw::set_up_once<other_type>(), &b);
  EXPECT_EQ(a.value, 5);
  EXPECT_EQ(b.value, 7);
  kw::detail::drop_kept_set_ups();
  EXPECT_EQ(alive, 0);
}
