#pragma once
// Private: the CSV the exports answer (reports, leads): one writer, so every download quotes
// alike and no cell is read as a formula by a spreadsheet.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace leadflow {

/// A CSV field: quoted when it must be (a comma, a quote, a line break), and a text starting
/// with = + - @, a tab or a carriage return given a leading ' so that no spreadsheet runs it.
std::string csv_field(const nlohmann::json& v);

/// The header line of `columns`, then one line per row with each column's value ("" where the
/// row has none), every line ended by CRLF.
std::string csv_table(const std::vector<std::string>& columns, const nlohmann::json& rows);

}  // namespace leadflow
