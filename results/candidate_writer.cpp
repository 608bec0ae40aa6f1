#include "results/candidate_writer.hpp"

#include <cmath>
#include <iostream>

#include "results/json_lines.hpp"

namespace tunebed::results {
namespace {

constexpr std::string_view kInsert = R"sql(
    INSERT INTO candidates (run_id, seq, kernel_id, device_id, opts, source_hash, compile_ms, samples_us,
                            median_us, status, error, max_error, created_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?))sql";

// Rejects at add() what the schema would reject at commit, where it would fail the whole batch.
void check(const Candidate& c) {
  if (c.kernel_id <= 0 || c.device_id <= 0) {
    throw DbError("candidate '" + c.opts + "' has no kernel or device id (upsert them first)");
  }
  if (c.status == CandidateStatus::ok && (!c.median_us || !std::isfinite(*c.median_us) || *c.median_us < 0)) {
    throw DbError("candidate '" + c.opts + "' has status ok but no finite median time");
  }
}

}  // namespace

CandidateWriter::CandidateWriter(const TuningDb& db, int64_t run_id, WriterOptions options)
    : db_(connect(db.path())), insert_(db_, kInsert), run_id_(run_id), options_(options) {
  if (options_.batch_rows < 1) throw DbError("CandidateWriter: batch_rows must be at least 1");
  Statement st = db_.prepare(
      "SELECT (SELECT count(*) FROM runs WHERE id = ?1), "
      "(SELECT coalesce(max(seq), 0) FROM candidates WHERE run_id = ?1)");
  st.bind_all(run_id).step();
  if (st.column_int(0) == 0) throw DbError("no run with id " + std::to_string(run_id) + " in " + db.path());
  next_seq_ = st.column_int(1) + 1;
  clock_ = std::thread(&CandidateWriter::watch_clock, this);
}

CandidateWriter::~CandidateWriter() {
  try {
    close();
  } catch (const std::exception& e) {
    std::cerr << "tunebed: candidates of run " << run_id_ << " were not all written to " << db_.path() << ": "
              << e.what() << "\n";
  }
}

int64_t CandidateWriter::add(Candidate c) {
  check(c);
  if (c.created_at.empty()) c.created_at = utc_now();
  std::unique_lock lock(queue_mu_);
  if (closing_) throw DbError("CandidateWriter: add after close");
  if (error_) {
    wake_.notify_one();  // the clock thread may retry the failed rows again
    std::rethrow_exception(std::exchange(error_, nullptr));
  }
  int64_t seq = next_seq_++;
  if (queue_.empty()) {
    oldest_ = std::chrono::steady_clock::now();
    wake_.notify_one();  // the clock thread now has a deadline to wait for
  }
  queue_.push_back({seq, std::move(c)});
  bool full = static_cast<int>(queue_.size()) >= options_.batch_rows;
  lock.unlock();
  if (full) flush();
  return seq;
}

void CandidateWriter::flush() {
  std::lock_guard write(write_mu_);
  commit_queued();
}

void CandidateWriter::close() {
  {
    std::lock_guard lock(queue_mu_);
    if (closing_) return;
    closing_ = true;
  }
  wake_.notify_all();
  clock_.join();
  flush();
}

void CandidateWriter::commit_queued() {
  std::vector<Queued> batch;
  {
    std::lock_guard lock(queue_mu_);
    batch.swap(queue_);
  }
  if (batch.empty()) return;
  try {
    Transaction tx(db_);
    for (const auto& [seq, c] : batch) {
      insert_
          .bind_all(run_id_, seq, c.kernel_id, c.device_id, c.opts, c.source_hash, c.compile_ms,
                    json_numbers(c.samples_us), c.median_us, to_string(c.status), c.error, c.max_error,
                    c.created_at)
          .run();
    }
    tx.commit();
  } catch (...) {
    // Nothing of the batch was committed: queue it again, ahead of what arrived meanwhile.
    std::lock_guard lock(queue_mu_);
    queue_.insert(queue_.begin(), std::make_move_iterator(batch.begin()),
                  std::make_move_iterator(batch.end()));
    oldest_ = std::chrono::steady_clock::now();
    throw;
  }
  committed_ += static_cast<int64_t>(batch.size());
}

void CandidateWriter::watch_clock() {
  std::unique_lock lock(queue_mu_);
  while (!closing_) {
    // Nothing due, or a failed commit waiting for add() to report it: sleep until woken.
    if (queue_.empty() || error_) {
      wake_.wait(lock);
      continue;
    }
    auto deadline = oldest_ + options_.max_delay;
    if (std::chrono::steady_clock::now() < deadline) {
      wake_.wait_until(lock, deadline);
      continue;
    }
    lock.unlock();
    std::exception_ptr failed;
    try {
      flush();
    } catch (...) {
      failed = std::current_exception();
    }
    lock.lock();
    if (failed) error_ = failed;
  }
}

}  // namespace tunebed::results
