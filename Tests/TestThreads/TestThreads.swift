import Glibc
import Testing

/// Runs a suite's tests on threads of their own, so that a test blocked in a wait does not hold
/// one of the Swift runtime's few cooperative threads.
///
/// Swift Testing calls every test from the Swift runtime's global executor, whose width on Linux
/// is the number of CPUs. Our integration tests are synchronous and spend most of their time
/// blocked (in `waitFor`, `waitpid`, a read from a child): on a 2-core machine two such tests
/// held the whole pool and every other test queued behind them, with the CPUs mostly idle. Under
/// this trait the suite's tests (and their child tasks, which inherit the preference) run on
/// `TestThreadPool.shared`, which has `ORIENTD_TEST_THREADS` threads (default 4 per CPU; 0 turns
/// the trait off).
///
/// Put it on each top-level suite whose tests block: `@Suite(.ownThreads)`. Nested suites and
/// `.serialized` keep their meaning; only the threads underneath change.
public struct OwnThreadsTrait: SuiteTrait, TestTrait, TestScoping {
  /// Scoped once for the suite: its tests run in a task group inside the scope and inherit it.
  public var isRecursive: Bool { false }

  /// Runs the suite (and so each of its tests) with `TestThreadPool.shared` preferred.
  public func provideScope(
    for test: Test, testCase: Test.Case?,
    performing function: @Sendable () async throws -> Void
  ) async throws {
    guard let pool = TestThreadPool.shared else { return try await function() }
    try await withTaskExecutorPreference(pool) {
      try await function()
    }
  }
}

extension Trait where Self == OwnThreadsTrait {
  /// Runs the suite's tests on `TestThreadPool.shared` instead of the cooperative pool.
  public static var ownThreads: Self { OwnThreadsTrait() }
}

/// A fixed set of threads that run Swift jobs first come, first served, and may block.
public final class TestThreadPool: TaskExecutor, @unchecked Sendable {
  /// The pool the `.ownThreads` trait uses; `nil` when `ORIENTD_TEST_THREADS=0` asks for the
  /// runtime's own pool (to compare, or to rule the pool out when hunting a failure).
  public static let shared: TestThreadPool? = {
    let width = configuredWidth()
    return width > 0 ? TestThreadPool(threads: width) : nil
  }()

  /// `ORIENTD_TEST_THREADS`, or four per CPU: the tests mostly wait, and a wider pool on two
  /// cores only loads the machine more when they do not.
  static func configuredWidth() -> Int {
    if let text = getenv("ORIENTD_TEST_THREADS").map({ String(cString: $0) }),
      let value = Int(text), value >= 0
    {
      return value
    }
    return max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) * 4
  }

  private var mutex = pthread_mutex_t()
  private var ready = pthread_cond_t()
  private var jobs: [UnownedJob] = []
  private var head = 0

  /// Starts `threads` detached worker threads; they live as long as the process.
  public init(threads: Int) {
    pthread_mutex_init(&mutex, nil)
    pthread_cond_init(&ready, nil)
    var started = 0
    for _ in 0..<threads {
      var thread = pthread_t()
      let context = Unmanaged.passRetained(self).toOpaque()
      let status = pthread_create(
        &thread, nil,
        { context in
          guard let context else { return nil }
          Unmanaged<TestThreadPool>.fromOpaque(context).takeRetainedValue().work()
          return nil
        }, context)
      if status == 0 {
        pthread_detach(thread)
        started += 1
      } else {
        Unmanaged<TestThreadPool>.fromOpaque(context).release()
      }
    }
    precondition(started > 0, "TestThreadPool: cannot start a thread")
  }

  /// Queues `job` for the next free thread.
  public func enqueue(_ job: consuming ExecutorJob) {
    let unowned = UnownedJob(job)
    pthread_mutex_lock(&mutex)
    jobs.append(unowned)
    pthread_cond_signal(&ready)
    pthread_mutex_unlock(&mutex)
  }

  private func work() {
    while true {
      pthread_mutex_lock(&mutex)
      while head == jobs.count { pthread_cond_wait(&ready, &mutex) }
      let job = jobs[head]
      head += 1
      if head == jobs.count {
        jobs.removeAll(keepingCapacity: true)
        head = 0
      }
      pthread_mutex_unlock(&mutex)
      job.runSynchronously(on: asUnownedTaskExecutor())
    }
  }
}
