/** A portal user as `/portal/api/users` answers: never the password hash. */
export interface PortalUserView {
  id: string;
  email: string;
  /** The display name visitors see on the user's messages; null until set. */
  name: string | null;
  role: 'admin' | 'agent';
  created_at: string;
  last_login_at: string | null;
}

/** `GET /portal/api/users`. */
export interface PortalUserList {
  users: PortalUserView[];
}

/** `/portal/api/session`: who is signed in, for which company, and the CSRF token of their writes. */
export interface SessionInfo {
  user: Pick<PortalUserView, 'id' | 'email' | 'name' | 'role'>;
  company: { id: string; name: string };
  csrf_token: string;
  expires_at: string;
}
