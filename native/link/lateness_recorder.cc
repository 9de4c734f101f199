#include "lateness_recorder.hh"

namespace netrepro {

LatenessRecorder::LatenessRecorder(const std::string& path) {
  if (!path.empty()) file_ = std::make_unique<BufferedWriter>(path, 4 << 20, true);
}

void LatenessRecorder::record(uint64_t scheduled_us, uint64_t sent_us) {
  // We never send before the schedule, so lateness is >= 0; clamped defensively, as the
  // histogram does.
  const uint64_t lateness = sent_us > scheduled_us ? sent_us - scheduled_us : 0;
  if (histogram_.count() == 0 || lateness > histogram_.max()) max_at_us_ = scheduled_us;
  histogram_.add_interval(scheduled_us, sent_us);
  if (file_) {
    file_->append_number(scheduled_us);
    file_->append_char(' ');
    file_->append_number(lateness);
    file_->append_char('\n');
  }
}

void LatenessRecorder::flush() {
  if (file_) file_->flush();
}

}  // namespace netrepro
