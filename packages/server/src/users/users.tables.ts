export type UserRole = 'admin' | 'agent';

export interface PortalUsersTable {
  id: string;
  company_id: string;
  /** Lower-cased and trimmed; unique across the installation so sign-in needs only the email. */
  email: string;
  /** Display name visitors see on the user's messages (users/display-name.ts); null: the email's local part. */
  name: string | null;
  /** PHC string of an argon2id hash (never the password). */
  password_hash: string;
  role: UserRole;
  created_at: string;
  last_login_at: string | null;
}

export interface PortalSessionsTable {
  /** SHA-256 (hex) of the random session id in the cookie: a database leak does not yield usable sessions. */
  id_hash: string;
  user_id: string;
  company_id: string;
  created_at: string;
  /** Absolute end of the session, whatever the activity. */
  expires_at: string;
  /** Sliding idle limit: moved forward on use. */
  idle_expires_at: string;
}

export interface UsersTables {
  portal_users: PortalUsersTable;
  portal_sessions: PortalSessionsTable;
}

// This capability's tables join the one database type (storage/schema.ts) from here, so the store knows no feature.
declare module '../storage/schema.ts' {
  interface Database extends UsersTables {}
}
