/*
 * log.h - the one logging macro of glassbox.
 *
 * Everything goes to stderr (stdout belongs to the MCP stdio transport).
 * Each line is prefixed with the level and the module; errors also carry
 * file:function:line. Never pass secrets, typed text, cookies or tokens.
 */
#ifndef GB_LOG_H
#define GB_LOG_H

enum gb_log_level { GB_LOG_DEBUG = 0, GB_LOG_INFO, GB_LOG_WARN, GB_LOG_ERROR };

/* Sets the lowest level that is printed (default GB_LOG_INFO, or the
 * GLASSBOX_LOG environment variable: debug|info|warn|error). */
void gb_log_set_level(enum gb_log_level level);

/* Prints one line; use the GB_LOG* macros instead of calling this. */
void gb_log_write(enum gb_log_level level, const char *module, const char *file, const char *func,
                  int line, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

#define GB_LOGD(mod, ...) gb_log_write(GB_LOG_DEBUG, mod, __FILE__, __func__, __LINE__, __VA_ARGS__)
#define GB_LOGI(mod, ...) gb_log_write(GB_LOG_INFO, mod, __FILE__, __func__, __LINE__, __VA_ARGS__)
#define GB_LOGW(mod, ...) gb_log_write(GB_LOG_WARN, mod, __FILE__, __func__, __LINE__, __VA_ARGS__)
#define GB_LOGE(mod, ...) gb_log_write(GB_LOG_ERROR, mod, __FILE__, __func__, __LINE__, __VA_ARGS__)

#endif
