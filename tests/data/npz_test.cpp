// .npz data sets: stored and deflated archives, zip64 records, every shape, dtype and .npy
// version the reader takes, the classes, the digest, a file numpy wrote, and the catalog's
// npz:PATH (load_dataset, dataset_shape, dataset_classes).
#include "data/npz.hpp"

#include <catch2/catch.hpp>

#include <cmath>

#include "config/option_table.hpp"
#include "experiment/kept_run.hpp"
#include "stalesgd/data/catalog.hpp"
#include "support/fixtures.hpp"
#include "support/npz_files.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

// A file numpy 1.24 wrote with numpy.savez_compressed (deflated, a zip64 extra field in every
// local header): x_train = uint8 (4, 2, 3), 10 * arange, y_train = int64 {0, 1, 3, 1},
// x_test = uint8 (2, 2, 3), 200 + arange, y_test = {2, 0}, num_classes = int64 5, shape ().
const char kNumpyFile[] =
    "\x50\x4b\x03\x04\x14\x00\x00\x00\x08\x00\x00\x00\x21\x00\x09\x70\x92\xcf\x62\x00\x00\x00"
    "\x98\x00\x00\x00\x0b\x00\x14\x00\x78\x5f\x74\x72\x61\x69\x6e\x2e\x6e\x70\x79\x01\x00\x10"
    "\x00\x98\x00\x00\x00\x00\x00\x00\x00\x62\x00\x00\x00\x00\x00\x00\x00\x9b\xec\x17\xea\x1b"
    "\x10\xc9\xc8\x50\xc6\x50\xad\x9e\x92\x5a\x9c\x5c\xa4\x6e\xa5\xa0\x5e\x53\x6a\xa8\xae\xa3"
    "\xa0\x9e\x96\x5f\x54\x52\x94\x98\x17\x9f\x5f\x94\x92\x0a\x12\x77\x4b\xcc\x29\x4e\x05\x8a"
    "\x17\x67\x24\x16\xa4\x02\xf9\x1a\x26\x3a\x0a\x46\x3a\x0a\xc6\x9a\x3a\x0a\xb5\x0a\xe4\x01"
    "\x2e\x06\x2e\x11\x39\x0d\x23\x1b\xb7\x80\xa8\x94\xbc\x8a\xa6\x9e\x69\x0b\x56\x6d\xd9\x77"
    "\xe2\xd2\x9d\x67\x00\x50\x4b\x03\x04\x14\x00\x00\x00\x08\x00\x00\x00\x21\x00\x2f\x55\x97"
    "\x3d\x4c\x00\x00\x00\xa0\x00\x00\x00\x0b\x00\x14\x00\x79\x5f\x74\x72\x61\x69\x6e\x2e\x6e"
    "\x70\x79\x01\x00\x10\x00\xa0\x00\x00\x00\x00\x00\x00\x00\x4c\x00\x00\x00\x00\x00\x00\x00"
    "\x9b\xec\x17\xea\x1b\x10\xc9\xc8\x50\xc6\x50\xad\x9e\x92\x5a\x9c\x5c\xa4\x6e\xa5\xa0\x6e"
    "\x93\x69\xa1\xae\xa3\xa0\x9e\x96\x5f\x54\x52\x94\x98\x17\x9f\x5f\x94\x92\x0a\x12\x77\x4b"
    "\xcc\x29\x4e\x05\x8a\x17\x67\x24\x16\xa4\x02\xf9\x1a\x26\x3a\x9a\x3a\x0a\xb5\x0a\x14\x00"
    "\x2e\x06\x28\x60\x84\xd2\xcc\x68\x7c\x00\x50\x4b\x03\x04\x14\x00\x00\x00\x08\x00\x00\x00"
    "\x21\x00\xb9\xfc\xcd\x56\x55\x00\x00\x00\x8c\x00\x00\x00\x0a\x00\x14\x00\x78\x5f\x74\x65"
    "\x73\x74\x2e\x6e\x70\x79\x01\x00\x10\x00\x8c\x00\x00\x00\x00\x00\x00\x00\x55\x00\x00\x00"
    "\x00\x00\x00\x00\x9b\xec\x17\xea\x1b\x10\xc9\xc8\x50\xc6\x50\xad\x9e\x92\x5a\x9c\x5c\xa4"
    "\x6e\xa5\xa0\x5e\x53\x6a\xa8\xae\xa3\xa0\x9e\x96\x5f\x54\x52\x94\x98\x17\x9f\x5f\x94\x92"
    "\x0a\x12\x77\x4b\xcc\x29\x4e\x05\x8a\x17\x67\x24\x16\xa4\x02\xf9\x1a\x46\x3a\x0a\x40\x64"
    "\xac\xa9\xa3\x50\xab\x40\x1e\xe0\x3a\x71\xf2\xd4\xe9\x33\x67\xcf\x9d\xbf\x70\xf1\xd2\x65"
    "\x00\x50\x4b\x03\x04\x14\x00\x00\x00\x08\x00\x00\x00\x21\x00\x83\x4f\xf1\x82\x48\x00\x00"
    "\x00\x90\x00\x00\x00\x0a\x00\x14\x00\x79\x5f\x74\x65\x73\x74\x2e\x6e\x70\x79\x01\x00\x10"
    "\x00\x90\x00\x00\x00\x00\x00\x00\x00\x48\x00\x00\x00\x00\x00\x00\x00\x9b\xec\x17\xea\x1b"
    "\x10\xc9\xc8\x50\xc6\x50\xad\x9e\x92\x5a\x9c\x5c\xa4\x6e\xa5\xa0\x6e\x93\x69\xa1\xae\xa3"
    "\xa0\x9e\x96\x5f\x54\x52\x94\x98\x17\x9f\x5f\x94\x92\x0a\x12\x77\x4b\xcc\x29\x4e\x05\x8a"
    "\x17\x67\x24\x16\xa4\x02\xf9\x1a\x46\x3a\x9a\x3a\x0a\xb5\x0a\x14\x00\x2e\x26\x06\x54\x00"
    "\x00\x50\x4b\x03\x04\x14\x00\x00\x00\x08\x00\x00\x00\x21\x00\x5e\xbf\xd5\x2e\x46\x00\x00"
    "\x00\x88\x00\x00\x00\x0f\x00\x14\x00\x6e\x75\x6d\x5f\x63\x6c\x61\x73\x73\x65\x73\x2e\x6e"
    "\x70\x79\x01\x00\x10\x00\x88\x00\x00\x00\x00\x00\x00\x00\x46\x00\x00\x00\x00\x00\x00\x00"
    "\x9b\xec\x17\xea\x1b\x10\xc9\xc8\x50\xc6\x50\xad\x9e\x92\x5a\x9c\x5c\xa4\x6e\xa5\xa0\x6e"
    "\x93\x69\xa1\xae\xa3\xa0\x9e\x96\x5f\x54\x52\x94\x98\x17\x9f\x5f\x94\x92\x0a\x12\x77\x4b"
    "\xcc\x29\x4e\x05\x8a\x17\x67\x24\x16\xa4\x02\xf9\x1a\x9a\x3a\x0a\xb5\x0a\x14\x01\x2e\x56"
    "\x06\x08\x00\x00\x50\x4b\x01\x02\x14\x03\x14\x00\x00\x00\x08\x00\x00\x00\x21\x00\x09\x70"
    "\x92\xcf\x62\x00\x00\x00\x98\x00\x00\x00\x0b\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
    "\x80\x01\x00\x00\x00\x00\x78\x5f\x74\x72\x61\x69\x6e\x2e\x6e\x70\x79\x50\x4b\x01\x02\x14"
    "\x03\x14\x00\x00\x00\x08\x00\x00\x00\x21\x00\x2f\x55\x97\x3d\x4c\x00\x00\x00\xa0\x00\x00"
    "\x00\x0b\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x01\x9f\x00\x00\x00\x79\x5f\x74"
    "\x72\x61\x69\x6e\x2e\x6e\x70\x79\x50\x4b\x01\x02\x14\x03\x14\x00\x00\x00\x08\x00\x00\x00"
    "\x21\x00\xb9\xfc\xcd\x56\x55\x00\x00\x00\x8c\x00\x00\x00\x0a\x00\x00\x00\x00\x00\x00\x00"
    "\x00\x00\x00\x00\x80\x01\x28\x01\x00\x00\x78\x5f\x74\x65\x73\x74\x2e\x6e\x70\x79\x50\x4b"
    "\x01\x02\x14\x03\x14\x00\x00\x00\x08\x00\x00\x00\x21\x00\x83\x4f\xf1\x82\x48\x00\x00\x00"
    "\x90\x00\x00\x00\x0a\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x01\xb9\x01\x00\x00"
    "\x79\x5f\x74\x65\x73\x74\x2e\x6e\x70\x79\x50\x4b\x01\x02\x14\x03\x14\x00\x00\x00\x08\x00"
    "\x00\x00\x21\x00\x5e\xbf\xd5\x2e\x46\x00\x00\x00\x88\x00\x00\x00\x0f\x00\x00\x00\x00\x00"
    "\x00\x00\x00\x00\x00\x00\x80\x01\x3d\x02\x00\x00\x6e\x75\x6d\x5f\x63\x6c\x61\x73\x73\x65"
    "\x73\x2e\x6e\x70\x79\x50\x4b\x05\x06\x00\x00\x00\x00\x05\x00\x05\x00\x1f\x01\x00\x00\xc4"
    "\x02\x00\x00\x00\x00";

Dataset load_ok(const fs::path& file) {
  auto ds = load_dataset("npz:" + file.string(), "no-such-data-dir");
  INFO((ds ? "" : ds.error().message));
  REQUIRE(ds.ok());
  return std::move(ds).value();
}

}  // namespace

TEST_CASE("npz: stored and deflated, with and without zip64, read the same", "[data][npz]") {
  TempDir dir;
  std::string digest;
  for (const bool deflate : {false, true}) {
    for (const bool zip64 : {false, true}) {
      INFO("deflate " << deflate << ", zip64 " << zip64);
      const fs::path file = dir / "d.npz";
      write_npz(file, small_npz_members(), {.deflate = deflate, .zip64 = zip64});
      const Dataset ds = load_ok(file);
      CHECK(ds.name == "npz:" + file.string());
      CHECK(ds.num_classes == 3);
      CHECK(ds.train.count == 6);
      CHECK(ds.test.count == 3);
      CHECK(ds.train.shape == ImageShape{1, 2, 3});
      CHECK(ds.test.shape == ImageShape{1, 2, 3});
      CHECK(ds.train.labels == std::vector<std::uint8_t>{0, 1, 2, 0, 1, 2});
      CHECK(ds.test.labels == std::vector<std::uint8_t>{2, 1, 0});
      REQUIRE(ds.train.features.size() == 36);
      CHECK(ds.train.sample(4)[5] == Approx(45.0f / 255.0f));
      CHECK(ds.test.sample(2)[1] == Approx(121.0f / 255.0f));
      // The digest is of the arrays, whichever way the archive holds them.
      CHECK(ds.digest.size() == 16);
      if (digest.empty()) digest = ds.digest;
      CHECK(ds.digest == digest);
    }
  }
}

TEST_CASE("npz: the digest changes with any array's bytes", "[data][npz]") {
  TempDir dir;
  auto members = small_npz_members();
  write_npz(dir / "a.npz", members);
  set_member(members, "y_test.npy", npy<std::int64_t>("<i8", {3}, {2, 1, 1}));
  write_npz(dir / "b.npz", members);
  const Dataset a = load_ok(dir / "a.npz"), b = load_ok(dir / "b.npz");
  CHECK(a.digest.substr(0, 8) == b.digest.substr(0, 8));  // train: the same arrays
  CHECK(a.digest.substr(8) != b.digest.substr(8));
  set_member(members, "num_classes.npy", npy<std::int64_t>("<i8", {}, {3}));
  write_npz(dir / "c.npz", members);
  CHECK(load_ok(dir / "c.npz").digest != b.digest);
}

TEST_CASE("npz: a file numpy wrote", "[data][npz]") {
  TempDir dir;
  const fs::path file = dir / "numpy.npz";
  const Bytes bytes(std::begin(kNumpyFile), std::end(kNumpyFile) - 1);  // without the literal's \0
  REQUIRE(bytes.size() == 1017);
  write_bytes(file, bytes);
  const Dataset ds = load_ok(file);
  CHECK(ds.num_classes == 5);
  CHECK(ds.train.count == 4);
  CHECK(ds.train.shape == ImageShape{1, 2, 3});
  CHECK(ds.train.labels == std::vector<std::uint8_t>{0, 1, 3, 1});
  CHECK(ds.test.labels == std::vector<std::uint8_t>{2, 0});
  CHECK(ds.train.sample(1)[0] == Approx(60.0f / 255.0f));
  CHECK(ds.test.sample(1)[5] == Approx(211.0f / 255.0f));
  CHECK(dataset_shape("npz:" + file.string()).value() == ImageShape{1, 2, 3});
  CHECK(dataset_classes("npz:" + file.string()).value() == 5);
}

TEST_CASE("npz: x as vectors, images or channels-first images, floats as they are", "[data][npz]") {
  TempDir dir;
  auto members = small_npz_members();
  const std::vector<float> f4{-1.5f, 0.0f, 2.0f, 300.0f, 0.25f, 1.0f};
  const std::vector<double> f8{-2.5, 7.0, 1e-3};
  SECTION("(N, D) float32") {
    set_member(members, "x_train.npy", npy("<f4", {6, 1}, f4));
    set_member(members, "x_test.npy", npy("<f4", {3, 1}, std::vector<float>{9, 8, 7}));
    write_npz(dir / "d.npz", members);
    const Dataset ds = load_ok(dir / "d.npz");
    CHECK(ds.train.shape == ImageShape{1, 1, 1});
    CHECK(ds.train.features == f4);
    CHECK(ds.test.features == std::vector<float>{9, 8, 7});
  }
  SECTION("(N, C, H, W) float64, channels first") {
    std::vector<double> x(6 * 2 * 1 * 3);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.5 * static_cast<double>(i) - 3.0;
    set_member(members, "x_train.npy", npy("<f8", {6, 2, 1, 3}, x));
    set_member(members, "x_test.npy", npy("<f8", {1, 2, 1, 3}, std::vector<double>(6, 1.0)));
    set_member(members, "y_test.npy", npy<std::int64_t>("<i8", {1}, {2}));
    write_npz(dir / "d.npz", members, {.deflate = true});
    const Dataset ds = load_ok(dir / "d.npz");
    CHECK(ds.train.shape == ImageShape{2, 1, 3});
    CHECK(ds.test.count == 1);
    CHECK(ds.train.sample(5)[4] == Approx(0.5 * 34 - 3.0));
    CHECK(ds.train.sample(0)[0] == -3.0f);
  }
  SECTION("(N, 1) labels, float64 (N, D) features") {
    set_member(members, "x_train.npy", npy("<f8", {6, 1}, std::vector<double>(6, 0.5)));
    set_member(members, "x_test.npy", npy("<f8", {3, 1}, f8));
    set_member(members, "y_train.npy", npy<std::int32_t>("<i4", {6, 1}, {1, 1, 0, 0, 1, 0}));
    set_member(members, "y_test.npy", npy<std::int32_t>("<i4", {3, 1}, {0, 1, 0}));
    write_npz(dir / "d.npz", members);
    const Dataset ds = load_ok(dir / "d.npz");
    CHECK(ds.num_classes == 2);
    CHECK(ds.train.labels == std::vector<std::uint8_t>{1, 1, 0, 0, 1, 0});
    CHECK(ds.test.features == std::vector<float>{-2.5f, 7.0f, 1e-3f});
  }
}

TEST_CASE("npz: every integer label dtype", "[data][npz]") {
  TempDir dir;
  auto members = small_npz_members();
  const auto both = [&](const std::string& descr, Bytes train, Bytes test) {
    INFO(descr);
    set_member(members, "y_train.npy", std::move(train));
    set_member(members, "y_test.npy", std::move(test));
    write_npz(dir / "d.npz", members);
    const Dataset ds = load_ok(dir / "d.npz");
    CHECK(ds.train.labels == std::vector<std::uint8_t>{0, 1, 2, 0, 1, 2});
    CHECK(ds.test.labels == std::vector<std::uint8_t>{2, 1, 0});
    CHECK(ds.num_classes == 3);
  };
  const std::vector<int> train{0, 1, 2, 0, 1, 2}, test{2, 1, 0};
  const auto as = [](const std::vector<int>& v, auto zero) {
    std::vector<decltype(zero)> out(v.begin(), v.end());
    return out;
  };
  both("|u1", npy("|u1", {6}, as(train, std::uint8_t{})),
       npy("|u1", {3}, as(test, std::uint8_t{})));
  both("|i1", npy("|i1", {6}, as(train, std::int8_t{})), npy("|i1", {3}, as(test, std::int8_t{})));
  both("<i2", npy("<i2", {6}, as(train, std::int16_t{})),
       npy("<i2", {3}, as(test, std::int16_t{})));
  both("<u2", npy("<u2", {6}, as(train, std::uint16_t{})),
       npy("<u2", {3}, as(test, std::uint16_t{})));
  both("<i4", npy("<i4", {6}, as(train, std::int32_t{})),
       npy("<i4", {3}, as(test, std::int32_t{})));
  both("<u4", npy("<u4", {6}, as(train, std::uint32_t{})),
       npy("<u4", {3}, as(test, std::uint32_t{})));
  both("<i8", npy("<i8", {6}, as(train, std::int64_t{})),
       npy("<i8", {3}, as(test, std::int64_t{})));
  both("<u8", npy("<u8", {6}, as(train, std::uint64_t{})),
       npy("<u8", {3}, as(test, std::uint64_t{})));
}

TEST_CASE("npz: classes from num_classes, else the largest label + 1 of both splits",
          "[data][npz]") {
  TempDir dir;
  auto members = small_npz_members();
  set_member(members, "y_test.npy", npy<std::int64_t>("<i8", {3}, {2, 3, 0}));
  write_npz(dir / "d.npz", members);
  CHECK(load_ok(dir / "d.npz").num_classes == 4);
  set_member(members, "num_classes.npy", npy<std::int32_t>("<i4", {}, {10}));
  write_npz(dir / "d.npz", members);
  CHECK(load_ok(dir / "d.npz").num_classes == 10);
  set_member(members, "num_classes.npy", npy<std::uint8_t>("|u1", {1}, {200}));
  write_npz(dir / "d.npz", members);
  CHECK(load_ok(dir / "d.npz").num_classes == 200);
}

TEST_CASE("npz: .npy format versions 1.0, 2.0 and 3.0", "[data][npz]") {
  TempDir dir;
  for (const int major : {1, 2, 3}) {
    INFO("version " << major);
    auto members = small_npz_members();
    set_member(members, "x_test.npy",
               npy<std::uint8_t>("|u1", {3, 2, 3}, std::vector<std::uint8_t>(18, 102), major));
    set_member(members, "y_train.npy", npy<std::int64_t>("<i8", {6}, {0, 1, 2, 0, 1, 2}, major));
    write_npz(dir / "d.npz", members, {.deflate = major == 2});
    const Dataset ds = load_ok(dir / "d.npz");
    CHECK(ds.test.sample(2)[5] == Approx(0.4f));
    CHECK(ds.train.labels[5] == 2);
  }
}

TEST_CASE("npz: npz:PATH is relative to the current directory, not --data-dir", "[data][npz]") {
  TempDir dir;
  write_npz(dir / "d.npz", small_npz_members());
  const std::string relative = fs::relative(dir / "d.npz", fs::current_path()).string();
  REQUIRE(fs::path(relative).is_relative());
  auto ds = load_dataset("npz:" + relative, dir.path());
  REQUIRE(ds.ok());
  CHECK(ds->name == "npz:" + relative);
  CHECK(absolute_dataset_name("npz:" + relative) == "npz:" + (dir / "d.npz").string());
  CHECK(absolute_dataset_name("mnist") == "mnist");
  // Under --data-dir it is not looked for.
  auto missing = load_dataset("npz:d.npz", dir.path());
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.error().message,
             Contains("d.npz: file not found") && Contains("relative to the current directory"));
}

TEST_CASE("npz: shape and classes come from the headers and labels alone", "[data][npz]") {
  TempDir dir;
  auto members = small_npz_members();
  set_member(members, "x_train.npy", npy("<f4", {6, 2, 2, 1}, std::vector<float>(24, NAN)));
  set_member(members, "x_test.npy", npy("<f4", {3, 2, 2, 1}, std::vector<float>(12, 0.0f)));
  set_member(members, "channels_first.npy", npy<std::int64_t>("<i8", {}, {1}));
  write_npz(dir / "d.npz", members, {.deflate = true});
  const std::string name = "npz:" + (dir / "d.npz").string();
  CHECK(dataset_shape(name).value() == ImageShape{2, 2, 1});
  CHECK(dataset_classes(name).value() == 3);
  // The features are checked when the data set loads.
  REQUIRE_FALSE(load_dataset(name, "data").ok());
  CHECK_THAT(load_dataset(name, "data").error().message, Contains("x_train holds nan at sample 0"));
  CHECK_FALSE(dataset_shape("npz:" + (dir / "none.npz").string()).ok());
}

TEST_CASE("npz: names", "[data][npz]") {
  CHECK(check_dataset_name("npz:a.npz").ok());
  CHECK(is_npz_name("npz:a.npz"));
  CHECK_FALSE(is_npz_name("mnist"));
  CHECK_THAT(check_dataset_name("npz:").error().message, Contains("needs the path of an .npz"));
  CHECK_THAT(check_dataset_name("svhn").error().message, Contains("npz:PATH"));
  CHECK_THAT(check_fetchable_name("npz:a.npz").error().message,
             Contains("npz:a.npz is a local .npz file") && Contains("does not fetch"));
  CHECK(check_fetchable_name("mnist").ok());
}

TEST_CASE("npz: a race knows an mpi job's absolute npz:PATH as the same file", "[data][npz]") {
  TempDir dir;
  TrainerOptions o;
  o.dataset = "npz:" + fs::relative(dir / "d.npz", fs::current_path()).string();
  nlohmann::json config = options_to_json(o);
  config["dataset"] = "npz:" + (dir / "d.npz").string();  // as mpi_launch.cpp passes it
  CHECK_FALSE(changed_setting(config, o).has_value());
  config["dataset"] = "npz:" + (dir / "other.npz").string();
  CHECK_THAT(changed_setting(config, o).value_or(""), Contains("dataset = "));
}

namespace {

// uint8 features 0 .. 16 of `train` and `test` samples of 2x3 (x_test reaching 16) and labels
// 1 .. 10 in turn, as sklearn's digits with 1-based labels.
std::vector<ZipMember> digits_like(std::size_t train, std::size_t test) {
  const auto split = [](std::size_t n, std::size_t offset) {
    std::vector<std::uint8_t> x(n * 6);
    std::vector<std::int64_t> y(n);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<std::uint8_t>((i + offset) % 17);
    for (std::size_t i = 0; i < n; ++i) y[i] = static_cast<std::int64_t>(i % 10 + 1);
    return std::pair{npy("|u1", {n, 2, 3}, x), npy("<i8", {n}, y)};
  };
  auto [x_train, y_train] = split(train, 0);
  auto [x_test, y_test] = split(test, 5);
  return {{"x_train.npy", x_train},
          {"y_train.npy", y_train},
          {"x_test.npy", x_test},
          {"y_test.npy", y_test}};
}

}  // namespace

TEST_CASE("npz: pixel_max, num_classes and channels_first say the data is meant", "[data][npz]") {
  TempDir dir;
  const fs::path file = dir / "d.npz";
  auto members = digits_like(12, 4);
  set_member(members, "pixel_max.npy", npy<std::int64_t>("<i8", {}, {16}));
  set_member(members, "num_classes.npy", npy<std::int64_t>("<i8", {}, {11}));
  write_npz(file, members);
  const Dataset ds = load_ok(file);
  // Every feature is exactly its value / 16.
  REQUIRE(ds.train.features.size() == 72);
  for (std::size_t i = 0; i < 72; ++i) CHECK(ds.train.features[i] == (i % 17) / 16.0f);
  CHECK(ds.test.sample(1)[5] == 1.0f);  // (11 + 5) % 17 = 16, the largest value
  CHECK(ds.num_classes == 11);
  CHECK(ds.train.labels[0] == 1);
  CHECK(ds.train.labels[9] == 10);
  auto info = read_npz_info(file);
  REQUIRE(info.ok());
  CHECK(info->scale == "uint8 scaled by 1/16 (pixel_max = 16)");
  CHECK(info->classes == "num_classes = 11; labels 1 .. 10");
  CHECK(info->layout == "(N, 2, 3): images of one channel");

  // channels_first keeps (N, 2, 3, 1) as 2 channels of 3x1, in the file's order.
  set_member(members, "x_train.npy", npy("<f4", {12, 2, 3, 1}, std::vector<float>(72, 0.25f)));
  std::vector<float> test(24);
  for (std::size_t i = 0; i < test.size(); ++i) test[i] = static_cast<float>(i);
  set_member(members, "x_test.npy", npy("<f4", {4, 2, 3, 1}, test));
  set_member(members, "channels_first.npy", npy<std::uint8_t>("|u1", {1}, {1}));
  std::erase_if(members, [](const ZipMember& m) { return m.name == "pixel_max.npy"; });
  write_npz(file, members);
  const Dataset kept = load_ok(file);
  CHECK(kept.train.shape == ImageShape{2, 3, 1});
  CHECK(kept.test.features == test);
  info = read_npz_info(file);
  REQUIRE(info.ok());
  CHECK(info->shape == ImageShape{2, 3, 1});
  CHECK(info->layout == "(N, 2, 3, 1): channels first (channels_first = 1)");
  CHECK(info->scale == "float32 as stored");
}

TEST_CASE("npz: uint8 reaching 64 is scaled by 1/255 and floats are taken as stored",
          "[data][npz]") {
  TempDir dir;
  const fs::path file = dir / "d.npz";
  auto members = small_npz_members();  // x_test reaches 125, MNIST's 0 .. 255 as well
  Bytes full(18);
  for (std::size_t i = 0; i < full.size(); ++i) full[i] = static_cast<std::uint8_t>(15 * i);
  set_member(members, "x_test.npy", npy("|u1", {3, 2, 3}, full));
  write_npz(file, members);
  const Dataset ds = load_ok(file);
  for (std::size_t i = 0; i < full.size(); ++i) {
    CHECK(ds.test.features[i] == static_cast<float>(full[i]) * (1.0f / 255.0f));
  }
  CHECK(read_npz_info(file)->scale == "uint8 scaled by 1/255");
  // 64, the threshold, in one split only; the other split's floats are not counted.
  set_member(members, "x_train.npy", npy("<f4", {6, 2, 3}, std::vector<float>(36, 3.0f)));
  set_member(members, "x_test.npy", npy("|u1", {3, 2, 3}, Bytes(18, 64)));
  write_npz(file, members);
  const Dataset mixed = load_ok(file);
  CHECK(mixed.train.features == std::vector<float>(36, 3.0f));
  CHECK(mixed.test.features[0] == 64.0f * (1.0f / 255.0f));
  CHECK(read_npz_info(file)->scale == "x_train float32 as stored, x_test uint8 scaled by 1/255");
  CHECK(read_npz_info(file)->classes == "the largest label + 1; labels 0 .. 2");
  // pixel_max=255 keeps 1/255 for dark images that are meant.
  set_member(members, "x_test.npy", npy("|u1", {3, 2, 3}, Bytes(18, 20)));
  set_member(members, "pixel_max.npy", npy<std::int64_t>("<i8", {}, {255}));
  write_npz(file, members);
  CHECK(load_ok(file).test.features[0] == 20.0f * (1.0f / 255.0f));
}

TEST_CASE("npz: each key is part of the digest", "[data][npz]") {
  TempDir dir;
  auto members = digits_like(12, 4);
  set_member(members, "num_classes.npy", npy<std::int64_t>("<i8", {}, {11}));
  set_member(members, "pixel_max.npy", npy<std::int64_t>("<i8", {}, {16}));
  write_npz(dir / "a.npz", members);
  const std::string a = load_ok(dir / "a.npz").digest;
  for (const auto& [key, value] : {std::pair{"num_classes", 12}, std::pair{"pixel_max", 17}}) {
    INFO(key);
    auto changed = members;
    set_member(changed, std::string(key) + ".npy", npy<std::int64_t>("<i8", {}, {value}));
    write_npz(dir / "b.npz", changed);
    const std::string b = load_ok(dir / "b.npz").digest;
    CHECK(b.substr(0, 8) == a.substr(0, 8));  // x_train and y_train
    CHECK(b.substr(8) != a.substr(8));
  }
  // channels_first, with a 4-D x.
  set_member(members, "x_train.npy", npy("<f4", {12, 2, 3, 1}, std::vector<float>(72, 0.5f)));
  set_member(members, "x_test.npy", npy("<f4", {4, 2, 3, 1}, std::vector<float>(24, 0.5f)));
  std::erase_if(members, [](const ZipMember& m) { return m.name == "pixel_max.npy"; });
  set_member(members, "channels_first.npy", npy<std::int64_t>("<i8", {}, {1}));
  write_npz(dir / "c.npz", members);
  set_member(members, "channels_first.npy", npy<std::int32_t>("<i4", {}, {1}));
  write_npz(dir / "d.npz", members);
  CHECK(load_ok(dir / "c.npz").digest.substr(8) != load_ok(dir / "d.npz").digest.substr(8));
}
