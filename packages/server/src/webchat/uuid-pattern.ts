/**
 * A UUID as a JSON Schema `pattern` (RFC 9562 §4 text form, either case): ids in route bodies and queries of the SDK,
 * platform and portal routes. Here, at the bottom of `webchat/`, so routes of every subfolder share it.
 */
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
