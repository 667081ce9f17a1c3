#pragma once
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "leadflow/store/accounts.hpp"
#include "leadflow/store/announcements.hpp"
#include "leadflow/store/audit.hpp"
#include "leadflow/store/distribution.hpp"
#include "leadflow/store/erasure.hpp"
#include "leadflow/store/intake.hpp"
#include "leadflow/store/lead_changes.hpp"
#include "leadflow/store/limits.hpp"
#include "leadflow/store/money.hpp"
#include "leadflow/store/port.hpp"
#include "leadflow/store/postbacks.hpp"
#include "leadflow/store/reoffers.hpp"
#include "leadflow/store/reporting.hpp"
#include "leadflow/store/sign_in.hpp"
#include "leadflow/store/statements.hpp"
#include "leadflow/store/suppression.hpp"

namespace leadflow {

/// The whole store: every role port (docs/store-ports.md), plus what only the processes that open
/// it ask (migrations, the shared secrets). One instance per process, shared by all threads:
/// implementations are thread-safe and own their connection pooling. No SQL or driver detail
/// crosses this interface. The composition roots open one and hand each consumer the port it
/// uses; a consumer holds a port, not the Store.
class Store : public AccountsStore,
              public SignInStore,
              public IntakeStore,
              public LeadChangesStore,
              public DistributionStore,
              public MoneyStore,
              public ReportingStore,
              public LimitsStore,
              public AnnouncementStore,
              public AuditStore,
              public SuppressionStore,
              public ErasureStore,
              public StatementStore,
              public ReofferStore,
              public PostbackStore {
 public:
  virtual ~Store() = default;
  /// Applies pending versioned migrations. Idempotent; safe to call at every start.
  virtual StoreStatus migrate() = 0;

  // --- secrets shared by every process ------------------------------------------------------
  /// The secret called `name`: the one stored, or else `candidate`, stored now. Every process
  /// that asks gets the same value, whichever stored it first. nullopt when the store could not
  /// say.
  virtual std::optional<std::string> shared_secret(std::string_view name,
                                                   std::string_view candidate) = 0;
};

/// Opens the store named by LEADFLOW_STORE: "sqlite:PATH", or a libpq URI
/// "postgresql://user:pass@host:port/db[?pool_size=N&...]" (pool_size, default 8, is taken out;
/// other parameters go to libpq). Returns nullptr and sets `error` (never echoing a password)
/// when the store cannot be opened.
std::unique_ptr<Store> open_store(const std::string& url, std::string& error);

/// open_store, then Store::migrate(): what every process does at start. `error` names the
/// setting ("LEADFLOW_STORE: ...").
std::unique_ptr<Store> open_migrated_store(const std::string& url, std::string& error);

}  // namespace leadflow
