/** The company's attachment limits (docs/design.md "Attachments"). */
export interface AttachmentLimitsView {
  max_attachment_bytes: number;
  allowed_types: string[];
}

/** `/portal/api/company`: the id integrators send as `X-Company`, the allowed origins, the attachment limits. */
export interface CompanyView {
  id: string;
  name: string;
  allowed_origins: string[];
  attachments: AttachmentLimitsView;
  created_at: string;
}
