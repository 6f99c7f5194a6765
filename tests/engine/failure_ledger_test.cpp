// FailureLedger: the failed workers' records and the one-line messages about them.
#include "engine/failure_ledger.hpp"

#include <catch2/catch.hpp>

using namespace stalesgd;

TEST_CASE("failure ledger: records each worker once and fills its row", "[engine][failures]") {
  FailureLedger ledger(4, 10.0);
  ledger.record(3, 2.0, FailureKind::kCrash);
  ledger.record(1, 14.02, FailureKind::kHang);
  ledger.record(3, 5.0, FailureKind::kHang);  // already failed: kept as it was
  CHECK(ledger.count() == 2);
  CHECK(ledger.failed(3));
  CHECK_FALSE(ledger.failed(0));
  WorkerRecord rec;
  rec.worker = 3;
  ledger.fill(rec);
  CHECK(rec.failed);
  CHECK(rec.failed_at_s == 2.0);
  CHECK(rec.failure == "crash");
  rec.worker = 0;
  ledger.fill(rec);
  CHECK_FALSE(rec.failed);
  CHECK(rec.failure.empty());
  CHECK(ledger.describe() ==
        "w3 crashed at 2.000 s, w1 hung (no gradient 10s after its minibatch's end; found at "
        "14.020 s)");
  CHECK(ledger.stop_message({"k-sync", 4, 3}, 3, 2) ==
        "workers 1 and 3 failed (w3 crashed at 2.000 s, w1 hung (no gradient 10s after its "
        "minibatch's end; found at 14.020 s)); k-sync needs K = 3 live workers and 2 of 4 are "
        "left: lower --k to 2 or less to run on without them");
  // backup (k-sync with K = P - b) names its own flag: b >= P - live (its fewer_workers_fix).
  CHECK(ledger.stop_message({.rule = "backup", .workers = 4, .k = 3}, 3, 2) ==
        "workers 1 and 3 failed (w3 crashed at 2.000 s, w1 hung (no gradient 10s after its "
        "minibatch's end; found at 14.020 s)); backup needs K = 3 live workers and 2 of 4 are "
        "left: raise --backups to 2 or more to run on without them");
  FailureLedger all(2, 10.0);
  all.record(0, 1.0, FailureKind::kCrash);
  all.record(1, 1.5, FailureKind::kCrash);
  CHECK(all.stop_message({"sync", 2, 2}, 0, 0) ==
        "all 2 workers failed (w0 crashed at 1.000 s, w1 crashed at 1.500 s); sync needs at "
        "least one live worker");
  FailureLedger one(1, 10.0);
  one.record(0, 1.0, FailureKind::kCrash);
  CHECK(one.stop_message({"async", 1, 1}, 1, 0) ==
        "worker 0 failed (w0 crashed at 1.000 s); async needs at least one live worker");
  FailureLedger three(5, 10.0);
  for (int w : {4, 0, 2}) three.record(w, 1.0, FailureKind::kCrash);
  CHECK(three.stop_message({"k-async", 5, 3}, 3, 2).starts_with("workers 0, 2 and 4 failed"));
}
